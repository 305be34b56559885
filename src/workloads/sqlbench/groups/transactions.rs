//! test-transactions: inserts, updates and deletes by primary key, in one transaction or
//! with autocommit, and rolled back every `medium` statements. sql-bench skips the group
//! on a server without transactions; so does the driver, for an engine without them.

use super::super::plan::{create_table, defs, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::Transactions;
/// Regions 'A'.. (27 of them, the last past 'Z').
const GROUPS: u64 = 27;

// Perl's $id/27 is fractional; the int column rounds it. Integer division keeps
// (region, grp) unique all the same.
fn insert(table: &str, id: u64, rev: u64) -> Step {
    let region = char::from(b'A' + (id % GROUPS) as u8);
    Step::Sql(format!(
        "insert into {table} values ({id},{rev},'{region}',{},0)",
        id / GROUPS
    ))
}

fn update(t: &str, v: u64, id: u64) -> Step {
    Step::Sql(format!("update {t} set updated={v} where idn={id}"))
}

fn delete(t: &str, id: u64) -> Step {
    Step::Sql(format!("delete from {t} where idn={id}"))
}

/// `each` of `ids` with autocommit off, rolled back every `medium` statements (and at the end).
fn rolled_back(
    name: &'static str,
    (loops, medium): (u64, u64),
    each: &dyn Fn(u64) -> Step,
    ids: std::ops::Range<u64>,
) -> Op {
    let mut steps = vec![Step::sql("SET autocommit=0")];
    let mut since = 1;
    for id in ids {
        steps.push(each(id));
        if since >= medium {
            steps.push(Step::sql("ROLLBACK"));
            since = 0;
        }
        since += 1;
    }
    if since > 1 {
        steps.push(Step::sql("ROLLBACK"));
    }
    Op::new(G, name, loops, steps)
}

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    // $opt_loop_count 500000 (/100 small), $opt_medium_loop_count 10000 (/10 small).
    let loops = size.count(500_000, 100);
    let medium = size.count(10_000, 10);
    let table = |name: &str| {
        create_table(
            name,
            &defs(&[
                "idn int NOT NULL",
                "rev_idn int NOT NULL",
                "region char(1) NOT NULL",
                "grp int NOT NULL",
                "updated tinyint NOT NULL",
            ]),
            &defs(&["primary key (idn)", "unique (region,grp)"]),
            engine,
        )
    };
    let in_one_transaction = |name, mut steps: Vec<Step>| {
        steps.insert(0, Step::sql("SET autocommit=0"));
        steps.push(Step::sql("COMMIT"));
        Op::new(G, name, loops, steps)
    };
    let autocommit = |name, mut steps: Vec<Step>| {
        steps.insert(0, Step::sql("SET autocommit=1"));
        Op::new(G, name, loops, steps)
    };
    vec![
        Op::setup(G, vec![table("bench1"), table("bench2")]),
        in_one_transaction(
            "insert_commit",
            (0..loops)
                .map(|id| insert("bench1", id, loops - 1 - id))
                .collect(),
        )
        .then_rows("bench1", loops),
        autocommit(
            "insert_autocommit",
            (0..loops)
                .map(|id| insert("bench2", id, loops - 1 - id))
                .collect(),
        )
        .then_rows("bench2", loops),
        rolled_back(
            "insert_rollback",
            (loops, medium),
            &|id| insert("bench1", id, 2 * loops - id),
            loops..2 * loops,
        )
        .then_rows("bench1", loops),
        rolled_back(
            "update_rollback",
            (loops, medium),
            &|id| update("bench1", 2, id),
            0..loops,
        ),
        rolled_back(
            "delete_rollback",
            (loops, medium),
            &|id| delete("bench1", id),
            0..loops,
        )
        .then_rows("bench1", loops),
        in_one_transaction(
            "update_commit",
            (0..loops).map(|id| update("bench1", 1, id)).collect(),
        ),
        autocommit(
            "update_autocommit",
            (0..loops).map(|id| update("bench2", 1, id)).collect(),
        ),
        in_one_transaction(
            "delete_commit",
            (0..loops).map(|id| delete("bench1", id)).collect(),
        )
        .then_rows("bench1", 0),
        autocommit(
            "delete_autocommit",
            (0..loops).map(|id| delete("bench2", id)).collect(),
        )
        .then_rows("bench2", 0),
        Op::setup(
            G,
            vec![
                Step::sql("SET autocommit=1"),
                Step::sql("drop table bench1"),
                Step::sql("drop table bench2"),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // 500000 loops (5000 small), a rollback every 10000 (1000 small) statements.
        for (size, l, rollbacks) in [(Size::FULL, 500_000u64, 50), (Size::SMALL, 5000, 5)] {
            let n = l as usize;
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("insert_commit", l, n + 2),
                    ("insert_autocommit", l, n + 1),
                    ("insert_rollback", l, n + 1 + rollbacks),
                    ("update_rollback", l, n + 1 + rollbacks),
                    ("delete_rollback", l, n + 1 + rollbacks),
                    ("update_commit", l, n + 2),
                    ("update_autocommit", l, n + 1),
                    ("delete_commit", l, n + 2),
                    ("delete_autocommit", l, n + 1),
                ]
            );
        }
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "InnoDB");
        assert_eq!(
            p[1].steps[1],
            Step::sql("insert into bench1 values (0,4999,'A',0,0)")
        );
        assert_eq!(
            p[1].steps[27],
            Step::sql("insert into bench1 values (26,4973,'[',0,0)")
        );
        assert_eq!(
            p[3].steps[1],
            Step::sql("insert into bench1 values (5000,5000,'F',185,0)")
        );
        assert_eq!(p[3].steps[1001], Step::sql("ROLLBACK"));
        assert_eq!(
            p[4].steps[1],
            Step::sql("update bench1 set updated=2 where idn=0")
        );
        assert_eq!(
            p[9].steps[5000],
            Step::sql("delete from bench2 where idn=4999")
        );
    }
}
