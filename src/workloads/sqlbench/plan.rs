//! What an operation is made of: its name and loop count as sql-bench reports them, the
//! steps it sends, and the table sizes that must hold after it. Pure data, so the groups'
//! statements and counts are testable without a server.

use super::Group;

/// One thing sent to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A statement; its rows are read and dropped (sql-bench's `fetch_all_rows` and `do`).
    Sql(String),
    /// A statement that must return exactly this many rows (the originals die otherwise).
    Rows(String, u64),
    /// An INSERT that must fail with a duplicate-key error (`insert_duplicates`).
    Duplicate(String),
    /// Open a new connection, run the statement if any, close it.
    Connect(Option<String>),
    /// Prepare the statement on the server, execute it, read its rows, close it.
    Prepared(String),
    /// Prepare the statement and keep it for `Execute` (one at a time).
    Prepare(String),
    /// Execute the kept statement with one integer parameter and read its rows.
    Execute(i64),
    /// Close the kept statement.
    Unprepare,
}

impl Step {
    pub(crate) fn sql(text: impl Into<String>) -> Step {
        Step::Sql(text.into())
    }

    /// The statement text, where there is one.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Step::Sql(t) | Step::Rows(t, _) | Step::Duplicate(t) | Step::Prepared(t) => Some(t),
            Step::Prepare(t) => Some(t),
            Step::Connect(t) => t.as_deref(),
            Step::Execute(_) | Step::Unprepare => None,
        }
    }

    /// Whether the step reads (the per-second lines count reads and writes apart).
    pub(crate) fn reads(&self) -> bool {
        match self {
            Step::Execute(_) => true,
            _ => self
                .text()
                .is_some_and(|t| t.get(..6).is_some_and(|w| w.eq_ignore_ascii_case("select"))),
        }
    }
}

/// The `Com_*` counter of a text statement, by its leading words.
pub(crate) fn com_of(text: &str) -> &'static str {
    let words: Vec<String> = text
        .split_whitespace()
        .take(3)
        .map(str::to_ascii_lowercase)
        .collect();
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match (w(0), w(1)) {
        ("select", _) => "Com_select",
        ("insert", _) if text.to_ascii_lowercase().contains(" select ") => "Com_insert_select",
        ("insert", _) => "Com_insert",
        ("update", _) => "Com_update",
        ("delete", _) => "Com_delete",
        ("create", "table") => "Com_create_table",
        ("create", "index") => "Com_create_index",
        ("create", "schema") | ("create", "database") => "Com_create_db",
        ("drop", "table") => "Com_drop_table",
        ("drop", "index") => "Com_drop_index",
        ("drop", _) => "Com_drop_db",
        ("alter", _) => "Com_alter_table",
        ("commit", _) => "Com_commit",
        ("rollback", _) => "Com_rollback",
        ("set", _) => "Com_set_option",
        ("use", _) => "Com_change_db",
        _ => "Com_other",
    }
}

/// One operation of a group: sql-bench's `Time for <name> (<loops>)` line. Setup work the
/// originals do not time (creating tables, loading a row) is an operation named `""`.
#[derive(Debug, Clone)]
pub struct Op {
    pub(crate) group: Group,
    pub name: &'static str,
    /// The count sql-bench reports for the operation (its "tests" column), which is not
    /// always the number of statements (`select_key` counts 2 per loop, as sent).
    pub loops: u64,
    pub steps: Vec<Step>,
    /// (table, rows) that must hold after the operation.
    pub rows_after: Vec<(&'static str, u64)>,
}

impl Op {
    pub(crate) fn new(group: Group, name: &'static str, loops: u64, steps: Vec<Step>) -> Op {
        Op {
            group,
            name,
            loops,
            steps,
            rows_after: Vec::new(),
        }
    }

    /// Untimed work between operations.
    pub(crate) fn setup(group: Group, steps: Vec<Step>) -> Op {
        Op::new(group, "", 0, steps)
    }

    pub fn is_setup(&self) -> bool {
        self.name.is_empty()
    }

    /// The counters the server moves for this operation's steps (`Com_*`, `Connections`,
    /// `Questions`): a test compares them with what the server reports. Executing a
    /// prepared statement also counts as its own command (`Com_select` for a SELECT);
    /// Questions counts text statements, executions and a closing connection's COM_QUIT,
    /// not prepares or closes of statements.
    pub fn com_counters(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let mut out = std::collections::BTreeMap::new();
        let mut kept = "";
        for s in &self.steps {
            let counted: Vec<&'static str> = match s {
                Step::Sql(t) | Step::Rows(t, _) | Step::Duplicate(t) => vec![com_of(t)],
                Step::Connect(t) => {
                    let mut v = vec!["Connections"];
                    v.extend(t.as_deref().map(com_of));
                    v
                }
                Step::Prepared(t) => {
                    vec![
                        "Com_stmt_prepare",
                        "Com_stmt_execute",
                        "Com_stmt_close",
                        com_of(t),
                    ]
                }
                Step::Prepare(t) => {
                    kept = t;
                    vec!["Com_stmt_prepare"]
                }
                Step::Execute(_) => vec!["Com_stmt_execute", com_of(kept)],
                Step::Unprepare => vec!["Com_stmt_close"],
            };
            let questions = match s {
                Step::Connect(t) => 1 + t.is_some() as u64,
                Step::Prepare(_) | Step::Unprepare => 0,
                _ => 1,
            };
            *out.entry("Questions").or_default() += questions;
            for c in counted {
                *out.entry(c).or_default() += 1;
            }
        }
        out
    }

    /// `table` must hold `rows` rows after this operation.
    pub(crate) fn then_rows(mut self, table: &'static str, rows: u64) -> Op {
        self.rows_after.push((table, rows));
        self
    }
}

/// `create table <name> (<fields>, <keys>) ENGINE=<engine>`, as sql-bench's `create()` for
/// MySQL with `--create-options=ENGINE=...`. `engine` is a checked SQL identifier.
pub(crate) fn create_table(name: &str, fields: &[String], keys: &[String], engine: &str) -> Step {
    let cols: Vec<&str> = fields.iter().chain(keys).map(String::as_str).collect();
    Step::Sql(format!(
        "create table {name} ({}) ENGINE={engine}",
        cols.join(",")
    ))
}

/// `count` steps, the loop variable from 0.
pub(crate) fn repeat(count: u64, f: impl FnMut(u64) -> Step) -> Vec<Step> {
    (0..count).map(f).collect()
}

/// `&str`s as owned column or key definitions.
pub(crate) fn defs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The loop's `tmpvar ^= ((tmpvar + 63) + i) * 3 % modulo` pseudo-random sequence that
/// test-insert and test-select share across their operations.
pub(crate) fn next_tmpvar(tmpvar: &mut i64, i: i64, modulo: i64) -> i64 {
    *tmpvar ^= ((*tmpvar + 63) + i) * 3 % modulo;
    *tmpvar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_by_leading_words() {
        assert_eq!(com_of("select 1"), "Com_select");
        assert_eq!(
            com_of("INSERT INTO bench2 SELECT * from bench1"),
            "Com_insert_select"
        );
        assert_eq!(com_of("insert into t values (1)"), "Com_insert");
        assert_eq!(com_of("create table t (a int)"), "Com_create_table");
        assert_eq!(com_of("CREATE INDEX i ON t (a)"), "Com_create_index");
        assert_eq!(com_of("DROP INDEX i ON t"), "Com_drop_index");
        assert_eq!(com_of("ALTER TABLE t ADD b int"), "Com_alter_table");
        let op = Op::new(
            Group::Insert,
            "x",
            3,
            vec![
                Step::Connect(Some("select 1".into())),
                Step::Prepare("select * from t where id=?".into()),
                Step::Execute(1),
                Step::Unprepare,
                Step::Duplicate("insert into t values (1)".into()),
            ],
        );
        let c = op.com_counters();
        assert_eq!(
            c.into_iter().collect::<Vec<_>>(),
            [
                ("Com_insert", 1),
                ("Com_select", 2),
                ("Com_stmt_close", 1),
                ("Com_stmt_execute", 1),
                ("Com_stmt_prepare", 1),
                ("Connections", 1),
                // select 1 and its COM_QUIT, the execution, the insert.
                ("Questions", 4),
            ]
        );
        assert!(Step::sql("select a from t").reads());
        assert!(!Step::sql("update t set a=1").reads());
    }
}
