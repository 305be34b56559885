//! test-create: many tables created, counted and dropped; create+drop loops, with and
//! without 16 keys.

use super::super::plan::{create_table, defs, repeat, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::Create;

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    // $create_loop_count: 10000, /1000 with --small-test; $max_tables: 400, 10 small.
    let create_loops = size.count(10_000, 1000);
    let tables = size.count(400, 40);
    let simple = |i: u64| {
        create_table(
            &format!("bench_{i}"),
            &defs(&[
                "i int NOT NULL",
                "d double",
                "f float",
                "s char(10)",
                "v varchar(100)",
            ]),
            &defs(&["primary key (i)"]),
            engine,
        )
    };
    let (fields, keys) = many_keys();
    let keyed = |i: u64| create_table(&format!("bench_{i}"), &fields, &keys, engine);
    let drop = |i: u64| Step::Sql(format!("drop table bench_{i}"));
    vec![
        Op::new(
            G,
            "create_MANY_tables",
            tables,
            repeat(tables, |i| simple(i + 1)),
        ),
        Op::new(
            G,
            "select_group_when_MANY_tables",
            tables,
            repeat(tables, |i| {
                Step::Sql(format!("select count(*) from bench_{}", i + 1))
            }),
        ),
        Op::new(
            G,
            "drop_table_when_MANY_tables",
            tables,
            repeat(tables, |i| drop(i + 1)),
        ),
        Op::new(
            G,
            "create+drop",
            create_loops,
            (1..=create_loops)
                .flat_map(|i| [simple(i), drop(i)])
                .collect(),
        ),
        // The original prints $opt_loop_count here but runs $create_loop_count loops: the
        // count is what ran.
        Op::new(
            G,
            "create_key+drop",
            create_loops,
            (1..=create_loops)
                .flat_map(|i| [keyed(i), drop(i)])
                .collect(),
        ),
    ]
}

/// 16 fields of the common types, a primary key over all 16 and a key on each but the first.
fn many_keys() -> (Vec<String>, Vec<String>) {
    let mut fields = defs(&[
        "field1 tinyint not null",
        "field2 mediumint not null",
        "field3 smallint not null",
        "field4 char(16) not null",
        "field5 integer not null",
        "field6 float not null",
        "field7 double not null",
    ]);
    fields.extend((8..=16).map(|i| format!("field{i} char(5) not null")));
    let primary: Vec<String> = (1..=16).map(|i| format!("field{i}")).collect();
    let mut keys = vec![format!("primary key ({})", primary.join(","))];
    keys.extend((2..=16).map(|i| format!("index index{i} (field{i})")));
    (fields, keys)
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // test-create.sh: 400 tables (10 small), create loops 10000 (10 small).
        for (size, t, c) in [(Size::FULL, 400, 10_000), (Size::SMALL, 10, 10)] {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("create_MANY_tables", t, t as usize),
                    ("select_group_when_MANY_tables", t, t as usize),
                    ("drop_table_when_MANY_tables", t, t as usize),
                    ("create+drop", c, 2 * c as usize),
                    ("create_key+drop", c, 2 * c as usize),
                ]
            );
        }
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "InnoDB");
        assert_eq!(
            p[0].steps[0],
            Step::sql("create table bench_1 (i int NOT NULL,d double,f float,s char(10),v varchar(100),primary key (i)) ENGINE=InnoDB")
        );
        assert_eq!(p[1].steps[9], Step::sql("select count(*) from bench_10"));
        let Step::Sql(keyed) = &p[4].steps[0] else {
            panic!()
        };
        assert!(keyed.contains("field16 char(5) not null,primary key (field1,field2,"));
        assert!(
            keyed.ends_with("index index16 (field16)) ENGINE=InnoDB"),
            "{keyed}"
        );
        assert_eq!(p[4].steps[1], Step::sql("drop table bench_1"));
    }
}
