//! The sbtest tables exactly as sysbench's `oltp_common.lua` creates and fills them.

use rand::Rng;

use super::rand::KeyDist;
use crate::workloads::oltp::spec::OltpSpec;

/// `c`: 10 groups of 11 random digits joined by `-` (119 characters).
pub(crate) fn c_value<R: Rng>(rng: &mut R) -> String {
    digit_groups(rng, 10)
}

/// `pad`: 5 groups of 11 random digits joined by `-` (59 characters).
pub(crate) fn pad_value<R: Rng>(rng: &mut R) -> String {
    digit_groups(rng, 5)
}

fn digit_groups<R: Rng>(rng: &mut R, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push((b'0' + rng.random_range(0..10u8)) as char);
        }
    }
    s
}

/// CREATE TABLE as sysbench writes it (`secondary` makes `id` a plain key).
pub(crate) fn create_table(spec: &OltpSpec, n: u32, engine: &str) -> String {
    let id = if spec.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if spec.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
         {key} (id)\n) /*! ENGINE = {engine} */"
    )
}

pub(crate) fn create_index(n: u32) -> String {
    format!("CREATE INDEX k_{n} ON sbtest{n}(k)")
}

/// Whether the test inserts ids of its own (`rand.unique()`): oltp_insert without auto_inc.
pub(crate) fn takes_unique_ids(spec: &OltpSpec) -> bool {
    spec.test == crate::workloads::oltp::spec::OltpTest::OltpInsert && !spec.auto_inc
}

/// Rows a table starts with: oltp_insert without auto_inc starts empty, as in sysbench.
pub(crate) fn initial_rows(spec: &OltpSpec) -> u32 {
    match takes_unique_ids(spec) {
        true => 0,
        false => spec.table_size,
    }
}

/// One multi-row INSERT for ids `first..=last` of table `n`. Ids are explicit so that
/// several connections can load one table in parallel and still get sysbench's 1..N.
pub(crate) fn insert_rows<R: Rng>(
    n: u32,
    first: u32,
    last: u32,
    table_size: u32,
    dist: &KeyDist,
    rng: &mut R,
) -> String {
    use std::fmt::Write;
    let rows = (last - first + 1) as usize;
    let mut q = String::with_capacity(64 + rows * 200);
    let _ = write!(q, "INSERT INTO sbtest{n}(id, k, c, pad) VALUES ");
    for id in first..=last {
        if id > first {
            q.push(',');
        }
        let k = dist.sample(rng, 1, table_size);
        let _ = write!(q, "({id},{k},'{}','{}')", c_value(rng), pad_value(rng));
    }
    q
}

/// Identifies what a loaded schema holds, so an unchanged one is not reloaded.
pub(crate) fn signature(spec: &OltpSpec, engine: &str) -> String {
    format!(
        "tables={} rows={} auto_inc={} secondary={} create_secondary={} engine={}",
        spec.tables,
        initial_rows(spec),
        spec.auto_inc,
        spec.secondary,
        spec.create_secondary,
        engine.to_lowercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn c_and_pad_shapes() {
        let mut rng = SmallRng::seed_from_u64(1);
        let c = c_value(&mut rng);
        let pad = pad_value(&mut rng);
        assert_eq!(c.len(), 119);
        assert_eq!(pad.len(), 59);
        for (s, groups) in [(&c, 10), (&pad, 5)] {
            let parts: Vec<&str> = s.split('-').collect();
            assert_eq!(parts.len(), groups);
            assert!(parts
                .iter()
                .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())));
        }
    }

    #[test]
    fn ddl_matches_sysbench() {
        let spec = OltpSpec::default();
        assert_eq!(
            create_table(&spec, 3, "innodb"),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  \
             k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  \
             pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        let spec = OltpSpec {
            auto_inc: false,
            secondary: true,
            ..OltpSpec::default()
        };
        let ddl = create_table(&spec, 1, "MyISAM");
        assert!(ddl.contains("id INTEGER NOT NULL,"), "{ddl}");
        assert!(ddl.contains("KEY xid (id)"), "{ddl}");
        assert!(ddl.ends_with("/*! ENGINE = MyISAM */"));
        assert_eq!(create_index(2), "CREATE INDEX k_2 ON sbtest2(k)");
    }

    #[test]
    fn bulk_insert_has_every_id_once() {
        let spec = OltpSpec::default();
        let mut rng = SmallRng::seed_from_u64(1);
        let q = insert_rows(1, 11, 20, 100, &KeyDist::new(&spec), &mut rng);
        assert!(q.starts_with("INSERT INTO sbtest1(id, k, c, pad) VALUES (11,"));
        assert_eq!(q.matches("),(").count(), 9);
        assert!(q.contains("),(20,"));
    }

    #[test]
    fn oltp_insert_without_auto_inc_starts_empty() {
        use crate::workloads::oltp::spec::OltpTest;
        let spec = OltpSpec {
            test: OltpTest::OltpInsert,
            auto_inc: false,
            ..OltpSpec::default()
        };
        assert_eq!(initial_rows(&spec), 0);
        assert_eq!(initial_rows(&OltpSpec::default()), 10000);
    }
}
