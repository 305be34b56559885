//! test-alter-table: a table of 8 int columns grown to 1000 columns one ALTER at a time,
//! indexes created and dropped, then every other added column dropped again, one per ALTER
//! (the original's drop loop, `drop_loop`).

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
    let dropped: Vec<Step> = drop_loop(fields)
        .into_iter()
        .map(|f| Step::Sql(format!("ALTER TABLE bench DROP i{f}")))
        .collect();
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
        Op::new(G, "alter_table_drop", dropped.len() as u64, dropped).then_rows("bench", rows),
        Op::setup(G, vec![Step::sql("drop table bench")]),
    ]
}

/// The columns the original's drop loop drops, one per ALTER, in order. With `$add` = 1
/// (one column per step, as in the add loop) its
/// `$end = max($field_count - $add, $opt_start_field_count); while (--$field_count >= $end)`
/// decrements `$field_count` once for the column it drops and once more for the test that
/// ends the inner loop: from `fields` it drops i`fields-1`, then i`fields-3`, ..., i9, and
/// leaves every other added column in the table.
fn drop_loop(fields: u64) -> Vec<u64> {
    let mut field_count = fields;
    let mut out = Vec::new();
    while field_count > START_FIELDS {
        let end = (field_count - 1).max(START_FIELDS);
        loop {
            field_count -= 1;
            if field_count < end {
                break;
            }
            out.push(field_count);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // test-alter-table.sh: $add = int((field_count - 8) / 10000) + 1 = 1, so the add loop
        // (`while ($field_count < $opt_field_count)`, one `$field_count++` per ALTER) runs
        // field_count - 8 times: 992 (1000 columns), 92 with --small-test (100).
        // The drop loop's `while (--$field_count >= $end)` with $end = $field_count - 1
        // drops one column and leaves $field_count 2 lower per ALTER: from 1000 down to 8
        // that is (1000 - 8) / 2 = 496 ALTERs, (100 - 8) / 2 = 46 with --small-test.
        for (size, rows, adds, drops) in [(Size::FULL, 1000, 992, 496), (Size::SMALL, 100, 92, 46)]
        {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("insert", rows, rows as usize),
                    ("alter_table_add", adds, adds as usize),
                    ("create_index", 8, 8),
                    ("drop_index", 8, 8),
                    ("alter_table_drop", drops, drops as usize),
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
        // The original drops i99, i97, ..., i9: every other column, from the last but one.
        assert_eq!(p[5].steps[0], Step::sql("ALTER TABLE bench DROP i99"));
        assert_eq!(p[5].steps[1], Step::sql("ALTER TABLE bench DROP i97"));
        assert_eq!(p[5].steps[45], Step::sql("ALTER TABLE bench DROP i9"));
    }
}
