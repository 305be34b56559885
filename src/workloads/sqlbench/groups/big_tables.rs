//! test-big-tables: a table of 1000 int columns, read and written whole.

use super::super::plan::{create_table, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::BigTables;

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    // $opt_loop_count 70000 and $opt_field_count 1000, both /10 with --small-test; the
    // scale applies to loops only.
    let loops = size.count(70_000, 10);
    let fields = if size.small { 100 } else { 1000 };
    let names: Vec<String> = (1..=fields).map(|i| format!("i{i}")).collect();
    let columns: Vec<String> = names.iter().map(|n| format!("{n} int")).collect();
    let values = vec!["1"; fields].join(",");
    let all = names.join(",");
    // The selects read the one row loaded before them.
    let select = [
        "select * from bench1".to_string(),
        format!("select {all} from bench1"),
    ]
    .iter()
    .flat_map(|q| vec![Step::Rows(q.clone(), 1); loops as usize])
    .collect();
    let insert = [
        format!("insert into bench1 values({values})"),
        format!("insert into bench1 ({all}) values({values})"),
    ];
    let inserts = insert
        .iter()
        .flat_map(|q| vec![Step::Sql(q.clone()); loops as usize])
        .collect();
    // Each operation runs twice (all columns as `*`, then by name) under one name, which
    // sql-bench's totals add up.
    vec![
        Op::setup(
            G,
            vec![
                create_table("bench1", &columns, &[], engine),
                Step::Sql(format!("insert into bench1 values ({values})")),
            ],
        ),
        Op::new(G, "select_many_fields", 2 * loops, select),
        Op::new(G, "insert_many_fields", 2 * loops, inserts).then_rows("bench1", 1 + 2 * loops),
        Op::setup(G, vec![Step::sql("drop table bench1")]),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        for (size, l) in [(Size::FULL, 70_000u64), (Size::SMALL, 7000)] {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("select_many_fields", 2 * l, 2 * l as usize),
                    ("insert_many_fields", 2 * l, 2 * l as usize),
                ]
            );
        }
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "InnoDB");
        let Step::Sql(create) = &p[0].steps[0] else {
            panic!()
        };
        assert!(create.starts_with("create table bench1 (i1 int,i2 int,"));
        assert!(create.ends_with("i100 int) ENGINE=InnoDB"));
        assert_eq!(p[1].steps[0], Step::Rows("select * from bench1".into(), 1));
        let Step::Rows(by_name, 1) = &p[1].steps[7000] else {
            panic!()
        };
        assert!(by_name.starts_with("select i1,i2,") && by_name.ends_with(",i100 from bench1"));
        let Step::Sql(ins) = &p[2].steps[7000] else {
            panic!()
        };
        assert!(ins.starts_with("insert into bench1 (i1,i2,") && ins.ends_with("values(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"));
    }
}
