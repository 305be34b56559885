//! test-alter-table: a table of 8 int columns grown to 1000 columns one ALTER at a time,
//! indexes created and dropped, then the columns dropped again.

use super::super::plan::{create_table, repeat, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::AlterTable;
const START_FIELDS: u64 = 8;

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    // $opt_row_count 1000 and $opt_field_count 1000, both /10 with --small-test; the scale
    // applies to rows only (the column count is the table's shape).
    let rows = size.count(1000, 10);
    let fields = if size.small { 100 } else { 1000 };
    let start: Vec<String> = (1..=START_FIELDS)
        .map(|i| format!("i{i} int not null"))
        .collect();
    let added = fields - START_FIELDS;
    let values = |i: u64| vec![i.to_string(); START_FIELDS as usize].join(",");
    vec![
        Op::setup(G, vec![create_table("bench", &start, &[], engine)]),
        Op::new(
            G,
            "insert",
            rows,
            repeat(rows, |i| {
                Step::Sql(format!("insert into bench values ( {} )", values(i)))
            }),
        )
        .then_rows("bench", rows),
        // One column per ALTER: (field_count - start) / loop_count + 1 = 1 with 10000 steps.
        Op::new(
            G,
            "alter_table_add",
            added,
            repeat(added, |k| {
                Step::Sql(format!(
                    "ALTER TABLE bench ADD i{} integer",
                    START_FIELDS + 1 + k
                ))
            }),
        ),
        Op::new(
            G,
            "create_index",
            START_FIELDS,
            repeat(START_FIELDS, |k| {
                Step::Sql(format!("CREATE INDEX bench_ind{0} ON bench (i{0})", k + 1))
            }),
        ),
        Op::new(
            G,
            "drop_index",
            START_FIELDS,
            repeat(START_FIELDS, |k| {
                Step::Sql(format!("DROP INDEX bench_ind{} ON bench", k + 1))
            }),
        ),
        Op::new(
            G,
            "alter_table_drop",
            added,
            repeat(added, |k| {
                Step::Sql(format!("ALTER TABLE bench DROP i{}", fields - k))
            }),
        )
        .then_rows("bench", rows),
        Op::setup(G, vec![Step::sql("drop table bench")]),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        for (size, rows, alters) in [(Size::FULL, 1000, 992), (Size::SMALL, 100, 92)] {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("insert", rows, rows as usize),
                    ("alter_table_add", alters, alters as usize),
                    ("create_index", 8, 8),
                    ("drop_index", 8, 8),
                    ("alter_table_drop", alters, alters as usize),
                ]
            );
        }
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "InnoDB");
        assert_eq!(
            p[0].steps[0],
            Step::sql("create table bench (i1 int not null,i2 int not null,i3 int not null,i4 int not null,i5 int not null,i6 int not null,i7 int not null,i8 int not null) ENGINE=InnoDB")
        );
        assert_eq!(
            p[1].steps[3],
            Step::sql("insert into bench values ( 3,3,3,3,3,3,3,3 )")
        );
        assert_eq!(p[2].steps[0], Step::sql("ALTER TABLE bench ADD i9 integer"));
        assert_eq!(
            p[2].steps[91],
            Step::sql("ALTER TABLE bench ADD i100 integer")
        );
        assert_eq!(p[4].steps[7], Step::sql("DROP INDEX bench_ind8 ON bench"));
        assert_eq!(p[5].steps[0], Step::sql("ALTER TABLE bench DROP i100"));
        assert_eq!(p[5].steps[91], Step::sql("ALTER TABLE bench DROP i9"));
    }
}
