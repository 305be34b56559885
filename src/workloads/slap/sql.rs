//! mysqlslap's auto-generated workload (`-a`), statement for statement: the table, the
//! pre-population, and the query list each client cycles through. Pure: no I/O.

use rand::Rng;

use super::spec::{LoadType, PrimaryKey, SlapSpec};

pub(crate) const SCHEMA: &str = "rmatrix_slap";

/// 60 characters: digits, upper case without U and V, lower case (as mysqlslap).
const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTWXYZabcdefghijklmnopqrstuvwxyz";
const STRING_LEN: usize = 126;

/// A statement of the query list: fixed text, or a text that needs a random existing key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Statement {
    Fixed(String),
    /// The statement is `prefix` followed by `'<key>'`.
    WithKey(String),
}

impl Statement {
    #[cfg(test)]
    pub(crate) fn render(&self, keys: &[String], rng: &mut impl Rng) -> String {
        let mut buf = String::new();
        self.render_into(keys, rng, &mut buf).to_string()
    }

    /// The statement's text: a fixed one as it is, a keyed one written into `buf` (reused
    /// from query to query, so the hot loop allocates nothing for it).
    pub(crate) fn render_into<'a>(
        &'a self,
        keys: &[String],
        rng: &mut impl Rng,
        buf: &'a mut String,
    ) -> &'a str {
        match self {
            Statement::Fixed(s) => s,
            Statement::WithKey(prefix) => {
                let key = &keys[rng.random_range(0..keys.len())];
                buf.clear();
                buf.push_str(prefix);
                buf.push('\'');
                buf.push_str(key);
                buf.push('\'');
                buf
            }
        }
    }
}

/// Everything a slap cell runs, generated once per cell.
#[derive(Debug, Clone)]
pub(crate) struct SlapSql {
    pub(crate) create_table: String,
    /// Pre-population INSERTs (run once, by one connection, before the clients start).
    pub(crate) preload: Vec<String>,
    /// The key list query, when keyed statements need it.
    pub(crate) key_query: Option<String>,
    /// What each client cycles through.
    pub(crate) queries: Vec<Statement>,
}

pub(crate) fn generate(
    spec: &SlapSpec,
    engine: &str,
    rng: &mut impl Rng,
) -> Result<SlapSql, String> {
    let keyed = spec.primary_key != PrimaryKey::None;
    if spec.load_type == LoadType::Key && !keyed {
        return Err(
            "load_type key needs a primary key: set primary_key to guid or autoincrement".into(),
        );
    }
    let inserts: Vec<String> = (0..spec.unique_write_number.max(1))
        .map(|_| insert(spec, rng))
        .collect();
    let n = spec.unique_query_number as usize + 1;
    let select = select(spec);
    let key_select = format!("{select} WHERE id = ");
    let queries: Vec<Statement> = match spec.load_type {
        LoadType::Write => (0..n)
            .map(|_| Statement::Fixed(insert(spec, rng)))
            .collect(),
        LoadType::Read => vec![Statement::Fixed(select.clone()); n],
        LoadType::Key => vec![Statement::WithKey(key_select); n],
        LoadType::Update => (0..n)
            .map(|_| {
                let u = update(spec, rng);
                if keyed {
                    Statement::WithKey(format!("{u} WHERE id = "))
                } else {
                    Statement::Fixed(u)
                }
            })
            .collect(),
        LoadType::Mixed => (0..n)
            .map(|i| match (i % 2, keyed) {
                (0, _) => Statement::Fixed(insert(spec, rng)),
                (_, true) => Statement::WithKey(key_select.clone()),
                (_, false) => Statement::Fixed(select.clone()),
            })
            .collect(),
    };
    let needs_keys = queries.iter().any(|q| matches!(q, Statement::WithKey(_)));
    Ok(SlapSql {
        create_table: create_table(spec, engine),
        preload: (0..spec.preload_rows as usize)
            .map(|i| inserts[i % inserts.len()].clone())
            .collect(),
        key_query: needs_keys.then(|| "SELECT id FROM t1".to_string()),
        queries,
    })
}

pub(crate) fn create_table(spec: &SlapSpec, engine: &str) -> String {
    let mut cols = Vec::new();
    match spec.primary_key {
        PrimaryKey::Guid => cols.push("id varchar(36) primary key".to_string()),
        PrimaryKey::Autoincrement => cols.push("id serial".to_string()),
        PrimaryKey::None => {}
    }
    for i in 0..spec.secondary_indexes {
        cols.push(format!("id{i} varchar(36) unique key"));
    }
    for i in 1..=spec.number_int_cols {
        cols.push(format!("intcol{i} INT(32)"));
    }
    for i in 1..=spec.number_char_cols {
        cols.push(format!("charcol{i} VARCHAR(128)"));
    }
    format!("CREATE TABLE `t1` ({}) Engine = {engine}", cols.join(","))
}

fn random_string(rng: &mut impl Rng) -> String {
    (0..STRING_LEN)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// libc `random()` range: 0 ..= 2^31-1.
fn random_int(rng: &mut impl Rng) -> u32 {
    rng.random_range(0..=i32::MAX as u32)
}

fn insert(spec: &SlapSpec, rng: &mut impl Rng) -> String {
    let mut vals = Vec::new();
    match spec.primary_key {
        PrimaryKey::Guid => vals.push("uuid()".to_string()),
        PrimaryKey::Autoincrement => vals.push("NULL".to_string()),
        PrimaryKey::None => {}
    }
    for _ in 0..spec.secondary_indexes {
        vals.push("uuid()".to_string());
    }
    for _ in 0..spec.number_int_cols {
        vals.push(random_int(rng).to_string());
    }
    for _ in 0..spec.number_char_cols {
        vals.push(format!("'{}'", random_string(rng)));
    }
    format!("INSERT INTO t1 VALUES ({})", vals.join(","))
}

fn select(spec: &SlapSpec) -> String {
    let cols: Vec<String> = (1..=spec.number_int_cols)
        .map(|i| format!("intcol{i}"))
        .chain((1..=spec.number_char_cols).map(|i| format!("charcol{i}")))
        .collect();
    format!("SELECT {} FROM t1", cols.join(","))
}

fn update(spec: &SlapSpec, rng: &mut impl Rng) -> String {
    let mut sets: Vec<String> = (1..=spec.number_int_cols)
        .map(|i| format!("intcol{i} = {}", random_int(rng)))
        .collect();
    sets.extend(
        (1..=spec.number_char_cols).map(|i| format!("charcol{i} = '{}'", random_string(rng))),
    );
    format!("UPDATE t1 SET {}", sets.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn spec(yaml: &str) -> SlapSpec {
        crate::input::yaml::from_str(yaml).unwrap()
    }
    fn rng() -> rand::rngs::StdRng {
        rand::rngs::StdRng::seed_from_u64(7)
    }

    #[test]
    fn table_matches_mysqlslap() {
        let s = spec(
            "{number_int_cols: 2, number_char_cols: 2, primary_key: guid, secondary_indexes: 2}",
        );
        assert_eq!(
            create_table(&s, "innodb"),
            "CREATE TABLE `t1` (id varchar(36) primary key,id0 varchar(36) unique key,id1 varchar(36) unique key,\
             intcol1 INT(32),intcol2 INT(32),charcol1 VARCHAR(128),charcol2 VARCHAR(128)) Engine = innodb"
        );
        assert_eq!(
            create_table(&spec("{primary_key: autoincrement}"), "MyISAM"),
            "CREATE TABLE `t1` (id serial,intcol1 INT(32),charcol1 VARCHAR(128)) Engine = MyISAM"
        );
    }

    #[test]
    fn write_load_is_distinct_inserts() {
        let s = spec("{load_type: write, number_int_cols: 10, number_char_cols: 10, primary_key: guid, secondary_indexes: 2}");
        let sql = generate(&s, "InnoDB", &mut rng()).unwrap();
        assert_eq!(sql.queries.len(), 11);
        assert_eq!(sql.preload.len(), 99);
        assert!(sql.key_query.is_none());
        let Statement::Fixed(q) = &sql.queries[0] else {
            panic!("fixed insert")
        };
        assert!(
            q.starts_with("INSERT INTO t1 VALUES (uuid(),uuid(),uuid(),"),
            "{q}"
        );
        assert_eq!(q.matches('\'').count(), 20, "ten quoted strings");
        let strings: Vec<&str> = q.split('\'').skip(1).step_by(2).collect();
        assert!(strings
            .iter()
            .all(|s| s.len() == 126 && s.bytes().all(|b| ALPHABET.contains(&b))));
    }

    #[test]
    fn key_read_update_mixed() {
        let key = generate(
            &spec("{load_type: key, primary_key: autoincrement}"),
            "InnoDB",
            &mut rng(),
        )
        .unwrap();
        assert_eq!(key.key_query.as_deref(), Some("SELECT id FROM t1"));
        let keys = vec!["42".to_string()];
        assert_eq!(
            key.queries[0].render(&keys, &mut rng()),
            "SELECT intcol1,charcol1 FROM t1 WHERE id = '42'"
        );

        let read = generate(&spec("{load_type: read}"), "InnoDB", &mut rng()).unwrap();
        assert_eq!(
            read.queries[0],
            Statement::Fixed("SELECT intcol1,charcol1 FROM t1".into())
        );

        let upd = generate(&spec("{load_type: update}"), "InnoDB", &mut rng()).unwrap();
        let Statement::Fixed(u) = &upd.queries[0] else {
            panic!("unkeyed update is fixed")
        };
        assert!(u.starts_with("UPDATE t1 SET intcol1 = ") && !u.contains("WHERE"));
        let upd = generate(
            &spec("{load_type: update, primary_key: guid}"),
            "InnoDB",
            &mut rng(),
        )
        .unwrap();
        assert!(matches!(&upd.queries[0], Statement::WithKey(p) if p.ends_with(" WHERE id = ")));

        let mixed = generate(
            &spec("{load_type: mixed, primary_key: guid}"),
            "InnoDB",
            &mut rng(),
        )
        .unwrap();
        assert!(matches!(&mixed.queries[0], Statement::Fixed(q) if q.starts_with("INSERT")));
        assert!(matches!(&mixed.queries[1], Statement::WithKey(q) if q.starts_with("SELECT")));
    }

    #[test]
    fn key_without_primary_key_is_refused() {
        let err = generate(&spec("{load_type: key}"), "InnoDB", &mut rng()).unwrap_err();
        assert!(err.contains("primary key"));
    }
}
