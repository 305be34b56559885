//! test-connect: connecting, trivial selects, and one-row and big-row reads.

use super::super::plan::{create_table, defs, repeat, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::Connect;
/// The blob length of `select_big_str` (`min(max_text_size, query_size - 30, 65000)`).
pub(crate) const STR_LENGTH: usize = 65000;
/// `--tcpip`'s cap on `$opt_loop_count` ("we can't do many new connections in a row as we
/// in this case may fill the TCP/IP stack"), applied after `--small-test` (and here after
/// the scale): every loop of the group, the connect loops a tenth of it.
pub(crate) const TCPIP_LOOPS: u64 = 1000;

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    let loops = match size.tcpip {
        true => size.count(500_000, 100).min(TCPIP_LOOPS),
        false => size.count(500_000, 100),
    };
    // Connect tests are done a tenth as often.
    let small = (loops / 10).max(1);
    let mut ops = simple_ops(loops, small);
    ops.extend(row_ops(loops, small, engine));
    ops.extend(big_str_ops(small, engine));
    ops
}

/// Connecting, and selects that read no table.
fn simple_ops(loops: u64, small: u64) -> Vec<Op> {
    vec![
        Op::new(G, "connect", small, repeat(small, |_| Step::Connect(None))),
        Op::new(
            G,
            "connect+select_simple",
            small,
            repeat(small, |i| Step::Connect(Some(format!("select {i}")))),
        ),
        Op::new(
            G,
            "select_simple",
            loops,
            repeat(loops, |i| Step::Sql(format!("select {i}"))),
        ),
        Op::new(
            G,
            "select_simple_cache",
            loops,
            repeat(loops, |_| Step::sql("select 10000")),
        ),
    ]
}

/// Reads of one and two small rows, and of a computed column.
fn row_ops(loops: u64, small: u64, engine: &str) -> Vec<Op> {
    let table = create_table(
        "bench1",
        &defs(&["a int NOT NULL", "i int", "s char(10)"]),
        &defs(&["primary key (a)"]),
        engine,
    );
    vec![
        Op::setup(
            G,
            vec![table, Step::sql("insert into bench1 values(1,100,'AAA')")],
        ),
        Op::new(
            G,
            "connect+select_1_row",
            small,
            repeat(small, |i| {
                Step::Connect(Some(format!("select a,i,s,{i} from bench1")))
            }),
        ),
        Op::new(
            G,
            "select_1_row",
            loops,
            repeat(loops, |i| {
                Step::Rows(format!("select a,i,s,{i} from bench1"), 1)
            }),
        ),
        Op::new(
            G,
            "select_1_row_cache",
            loops,
            repeat(loops, |_| Step::Rows("select a,i,s from bench1".into(), 1)),
        ),
        Op::setup(G, vec![Step::sql("insert into bench1 values(2,200,'BBB')")]),
        Op::new(
            G,
            "select_2_rows",
            loops,
            repeat(loops, |i| {
                Step::Rows(format!("select a,i,s,{i} from bench1"), 2)
            }),
        )
        .then_rows("bench1", 2),
        Op::new(
            G,
            "select_column+column",
            loops,
            repeat(loops, |i| {
                Step::Sql(format!("select a+a+a+a+a+a+a+a+a+{i} from bench1"))
            }),
        ),
    ]
}

/// Reads of one big string, then the table dropped.
fn big_str_ops(small: u64, engine: &str) -> Vec<Op> {
    vec![
        Op::setup(
            G,
            vec![
                Step::sql("drop table bench1"),
                create_table("bench1", &defs(&["b blob"]), &[], engine),
                Step::Sql(format!(
                    "insert into bench1 values('{}')",
                    "A".repeat(STR_LENGTH)
                )),
            ],
        ),
        Op::new(
            G,
            "select_big_str",
            small,
            repeat(small, |i| {
                Step::Rows(format!("select b,{i} from bench1"), 1)
            }),
        )
        .then_rows("bench1", 1),
        Op::setup(G, vec![Step::sql("drop table bench1")]),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // test-connect.sh: $opt_loop_count=500000 (/100 with --small-test), connect tests
        // a tenth of it.
        for (size, l, s) in [(Size::FULL, 500_000, 50_000), (Size::SMALL, 5000, 500)] {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("connect", s, s as usize),
                    ("connect+select_simple", s, s as usize),
                    ("select_simple", l, l as usize),
                    ("select_simple_cache", l, l as usize),
                    ("connect+select_1_row", s, s as usize),
                    ("select_1_row", l, l as usize),
                    ("select_1_row_cache", l, l as usize),
                    ("select_2_rows", l, l as usize),
                    ("select_column+column", l, l as usize),
                    ("select_big_str", s, s as usize),
                ]
            );
        }
    }

    #[test]
    fn tcpip_caps_every_loop() {
        // test-connect.sh: `$opt_loop_count=min(1000, $opt_loop_count) if ($opt_tcpip)`
        // after --small-test's /100, then `$small_loop_count=$opt_loop_count/10`: the full
        // suite's 500000 and --small-test's 5000 both become 1000, the connects 100.
        for size in [Size::FULL, Size::SMALL] {
            let tcp = Size {
                tcpip: true,
                ..size
            };
            for (name, loops, _) in ops(&plan(tcp, "InnoDB")) {
                let want = match name.starts_with("connect") || name == "select_big_str" {
                    true => 100,
                    false => 1000,
                };
                assert_eq!(loops, want, "{name}");
            }
        }
        // Below the cap nothing changes: the allocator example's 0.3 of --small-test.
        let small = Size {
            scale: 0.15,
            ..Size::SMALL
        };
        let tcp = Size {
            tcpip: true,
            ..small
        };
        assert_eq!(ops(&plan(small, "InnoDB")), ops(&plan(tcp, "InnoDB")));
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "MyISAM");
        assert_eq!(p[2].steps[7], Step::sql("select 7"));
        assert_eq!(
            p[4].steps[0],
            Step::sql("create table bench1 (a int NOT NULL,i int,s char(10),primary key (a)) ENGINE=MyISAM")
        );
        assert_eq!(
            p[5].steps[3],
            Step::Connect(Some("select a,i,s,3 from bench1".into()))
        );
        assert_eq!(
            p[10].steps[2],
            Step::sql("select a+a+a+a+a+a+a+a+a+2 from bench1")
        );
    }
}
