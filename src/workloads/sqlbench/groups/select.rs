//! test-select: selects on a table keyed by (region, idn), (region, rev_idn) and (region,
//! grp, idn): big selects, long OR lists, MIN/MAX and COUNT on key parts, GROUP BY and
//! COUNT(DISTINCT).

use super::super::plan::{create_table, defs, next_tmpvar, repeat, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::Select;
const REGIONS: u64 = 6;
/// Conditions in a `select_range` OR list (`min(max_columns, 500, ...)` for MySQL).
const COLUMNS: i64 = 500;

fn region(n: u64) -> char {
    char::from(b'A' + n as u8)
}

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    // 10000 rows, 7000 medium and 10 small loops, 100 groups; all /10 with --small-test.
    let loops = size.count(10_000, 10);
    let medium = size.count(7000, 10);
    let small = size.count(10, 10);
    let groups = if size.small { 10 } else { 100 };
    let half = loops / 2;
    let insert = |id: u64| {
        let grp = id * 3 % groups;
        let (r, rev) = (region(id % REGIONS), loops - 1 - id);
        // Past the half the statement names its columns (a different insert path).
        let cols = if id > half {
            " (region,idn,rev_idn,grp,grp_no_key)"
        } else {
            ""
        };
        Step::Sql(format!(
            "insert into bench1{cols} values ('{r}',{id},{rev},{grp},{grp})"
        ))
    };

    let big = big_selects(small, groups);

    let range = range_selects(small, groups);
    let range_count = range.len() as u64;

    let min_max = min_max_on_key(loops, groups);
    let count_on_key = count_on_key(loops, groups);
    let mut ops = vec![
        Op::setup(
            G,
            vec![create_table(
                "bench1",
                &defs(&[
                    "region char(1) NOT NULL",
                    "idn integer(6) NOT NULL",
                    "rev_idn integer(6) NOT NULL",
                    "grp integer(6) NOT NULL",
                    "grp_no_key integer(6) NOT NULL",
                ]),
                &defs(&[
                    "primary key (region,idn)",
                    "unique (region,rev_idn)",
                    "unique (region,grp,idn)",
                ]),
                engine,
            )],
        ),
        Op::new(G, "insert", loops, repeat(loops, insert)).then_rows("bench1", loops),
        // Reads the table into memory before the query-cache test.
        Op::setup(
            G,
            vec![Step::sql(
                "select sum(idn+1000),sum(rev_idn-1000) from bench1",
            )],
        ),
        each(
            "select_cache",
            loops,
            "select sum(idn+100),sum(rev_idn-100) from bench1",
        ),
        Op::new(
            G,
            "select_cache2",
            loops,
            repeat(loops, |t| {
                Step::Sql(format!("select sum(idn+{t}),sum(rev_idn-{t}) from bench1"))
            }),
        ),
        Op::new(G, "select_big", small * 7, big),
        Op::new(
            G,
            "select_range",
            range_count,
            range.into_iter().map(Step::Sql).collect(),
        ),
        Op::new(G, "min_max_on_key", loops * 7, min_max),
        Op::new(G, "count_on_key", loops * 5, count_on_key),
    ];
    ops.extend(group_counts(medium, loops));
    ops.push(Op::setup(G, vec![Step::sql("drop table bench1")]));
    ops
}

/// One query sent `n` times.
fn each(name: &'static str, n: u64, q: &str) -> Op {
    Op::new(G, name, n, repeat(n, |_| Step::sql(q)))
}

/// The GROUP BY and COUNT(DISTINCT) operations, `medium` times each (count_distinct_big a
/// tenth of that).
fn group_counts(medium: u64, loops: u64) -> Vec<Op> {
    vec![
        each(
            "count_group_on_key_parts",
            medium,
            "select grp,count(*) from bench1 group by grp",
        ),
        each(
            "count_group",
            medium,
            "select grp_no_key,count(*) from bench1 group by grp_no_key",
        ),
        each(
            "count_group_with_order",
            medium,
            "select grp_no_key,count(*) as cnt from bench1 group by grp_no_key order by cnt",
        ),
        each(
            "count_distinct_key_prefix",
            medium,
            "select count(distinct region) from bench1",
        ),
        each(
            "count_distinct",
            medium,
            "select count(distinct grp) from bench1",
        ),
        each(
            "count_distinct_2",
            medium,
            "select count(distinct grp),count(distinct rev_idn) from bench1",
        ),
        each(
            "count_distinct_group_on_key",
            medium,
            "select region,count(distinct idn) from bench1 group by region",
        ),
        each(
            "count_distinct_group_on_key_parts",
            medium,
            "select grp,count(distinct idn) from bench1 group by grp",
        ),
        each(
            "count_distinct_group",
            medium,
            "select grp,count(distinct rev_idn) from bench1 group by grp",
        ),
        each(
            "count_distinct_big",
            (medium / 10).max(1),
            "select idn,count(distinct region) from bench1 group by idn",
        )
        .then_rows("bench1", loops),
    ]
}

/// select_big: 7 selects a loop on the key prefixes and on `grp`.
fn big_selects(small: u64, groups: u64) -> Vec<Step> {
    (0..small)
        .flat_map(|i| {
            let grp = i * 11 % groups;
            let r = region(i % (REGIONS + 1));
            [
                format!("select idn from bench1 where region='{r}'"),
                format!("select idn from bench1 where region='{r}' and idn={i}"),
                format!("select idn from bench1 where region='{r}' and rev_idn={i}"),
                format!("select idn from bench1 where region='{r}' and grp={grp}"),
                format!("select idn from bench1 where region>='B' and region<='C' and grp={grp}"),
                format!("select idn from bench1 where region>='B' and region<='E' and grp={grp}"),
                format!("select idn from bench1 where grp={grp}"),
            ]
        })
        .map(Step::Sql)
        .collect()
}

/// select_range: a loop's IN list and 10 x 4 OR lists of `COLUMNS` conditions.
fn range_selects(small: u64, groups: u64) -> Vec<String> {
    let mut tmpvar: i64 = 0;
    let mut range = Vec::new();
    for i in 0..small {
        let r = region(i % (REGIONS + 1));
        let mut or_part = "grp = 1".to_string();
        let mut or_part2 = "region='A' and grp=1".to_string();
        let mut in_list = vec!["1".to_string()];
        for j in 1..COLUMNS {
            let t = next_tmpvar(&mut tmpvar, j, 100_000);
            let grp = t % groups as i64;
            let tr = region((t % REGIONS as i64) as u64);
            or_part.push_str(&format!(" or grp={grp}"));
            in_list.push(grp.to_string());
            // max_conditions / 2 = 4999: every j qualifies.
            or_part2.push_str(&format!(" or region='{tr}' and grp={grp}"));
        }
        let or_part = format!("region='{r}' and ({or_part})");
        let q = "select * from bench1 where ";
        range.push(format!(
            "{q}region='{r}' and (grp IN ({}))",
            in_list.join(",")
        ));
        for _ in 0..10 {
            range.push(format!("{q}{or_part}"));
            range.push(format!("{q}{or_part2}"));
            range.push(format!("{q} ({or_part}) and idn < 50"));
            range.push(format!(
                "{q} (({or_part}) or (region='A' and grp < 10)) and region <='B'"
            ));
        }
    }
    range
}

/// min_max_on_key: 7 MIN/MAX queries a loop.
fn min_max_on_key(loops: u64, groups: u64) -> Vec<Step> {
    (0..loops)
        .flat_map(|t| {
            let grp = t * 3 % groups;
            let r = region(t % REGIONS);
            [
                "select min(region) from bench1".to_string(),
                "select max(region) from bench1".to_string(),
                "select min(region),max(region) from bench1".to_string(),
                format!("select min(rev_idn) from bench1 where region='{r}'"),
                format!("select max(grp) from bench1 where region='{r}'"),
                format!("select max(idn) from bench1 where region='{r}' and grp={grp}"),
                format!("select max(region) from bench1 where region<'{r}'"),
            ]
        })
        .map(Step::Sql)
        .collect()
}

/// count_on_key: 5 COUNT queries a loop on key parts.
fn count_on_key(loops: u64, groups: u64) -> Vec<Step> {
    (0..loops)
        .flat_map(|t| {
            let grp = t * 3 % groups;
            let r = region(t % REGIONS);
            [
                format!("select count(*) from bench1 where region='{r}'"),
                format!("select count(*) from bench1 where region='{r}' and grp={grp}"),
                format!("select count(*) from bench1 where region>'{r}'"),
                format!("select count(*) from bench1 where region<='{r}'"),
                format!("select count(*) from bench1 where region='{r}' and grp>{grp}"),
            ]
        })
        .map(Step::Sql)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // 10000 rows, 7000 medium and 10 small loops (/10 small); select_range sends 41
        // queries a loop (one IN list, 10 x 4 OR lists); min_max_on_key 7, count_on_key 5.
        for (size, l, m, s) in [
            (Size::FULL, 10_000u64, 7000u64, 10u64),
            (Size::SMALL, 1000, 700, 1),
        ] {
            let (lu, mu) = (l as usize, m as usize);
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("insert", l, lu),
                    ("select_cache", l, lu),
                    ("select_cache2", l, lu),
                    ("select_big", 7 * s, 7 * s as usize),
                    ("select_range", 41 * s, 41 * s as usize),
                    ("min_max_on_key", 7 * l, 7 * lu),
                    ("count_on_key", 5 * l, 5 * lu),
                    ("count_group_on_key_parts", m, mu),
                    ("count_group", m, mu),
                    ("count_group_with_order", m, mu),
                    ("count_distinct_key_prefix", m, mu),
                    ("count_distinct", m, mu),
                    ("count_distinct_2", m, mu),
                    ("count_distinct_group_on_key", m, mu),
                    ("count_distinct_group_on_key_parts", m, mu),
                    ("count_distinct_group", m, mu),
                    ("count_distinct_big", m / 10, mu / 10),
                ]
            );
        }
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, "InnoDB");
        assert_eq!(
            p[1].steps[7],
            Step::sql("insert into bench1 values ('B',7,992,1,1)")
        );
        assert_eq!(
            p[1].steps[501],
            Step::sql(
                "insert into bench1 (region,idn,rev_idn,grp,grp_no_key) values ('D',501,498,3,3)"
            )
        );
        assert_eq!(
            p[4].steps[3],
            Step::sql("select sum(idn+3),sum(rev_idn-3) from bench1")
        );
        assert_eq!(
            p[5].steps[6],
            Step::sql("select idn from bench1 where grp=0")
        );
        let Step::Sql(inl) = &p[6].steps[0] else {
            panic!()
        };
        assert!(
            inl.starts_with("select * from bench1 where region='A' and (grp IN (1,"),
            "{inl}"
        );
        let Step::Sql(or) = &p[6].steps[1] else {
            panic!()
        };
        assert!(
            or.starts_with("select * from bench1 where region='A' and (grp = 1 or grp="),
            "{or}"
        );
        assert_eq!(or.matches(" or ").count(), 499);
        assert_eq!(
            p[7].steps[13],
            Step::sql("select max(region) from bench1 where region<'B'")
        );
    }
}
