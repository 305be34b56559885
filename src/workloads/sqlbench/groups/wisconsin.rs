//! test-wisconsin: the Wisconsin benchmark's tables (onek, tenk1, tenk2, Bprime) loaded
//! row by row and its query list run, the selects `loops` times each.
//!
//! sql-bench reads the rows from its Data/Wisconsin files; these are generated here in the
//! Wisconsin benchmark's own way (unique2 sequential, unique1 a fixed permutation, the other
//! numbers derived from unique1), so every query finds what the originals find.

use super::super::plan::{create_table, defs, Op, Step};
use super::super::{Group, Size};

const G: Group = Group::Wisconsin;
const TABLES: [(&str, u64, &str); 4] = [
    ("onek", 1000, "hundred1"),
    ("tenk1", 10_000, "hundred2"),
    ("tenk2", 10_000, "hundred3"),
    ("Bprime", 10_000, "hundred4"),
];

pub(crate) fn plan(size: Size, engine: &str) -> Vec<Op> {
    let loops = size.count(5000, 5);
    let creates = TABLES
        .iter()
        .map(|(name, _, hundred)| {
            let width = if *name == "onek" { 5 } else { 4 };
            let mut fields = vec![
                format!("unique1 int({width}) NOT NULL"),
                "unique2 int(4) NOT NULL".into(),
            ];
            for c in ["two", "four", "ten", "twenty"] {
                fields.push(format!("{c} int(4)"));
            }
            fields.push("hundred int(4) NOT NULL".into());
            for c in [
                "thousand",
                "twothousand",
                "fivethous",
                "tenthous",
                "odd",
                "even",
            ] {
                fields.push(format!("{c} int(4)"));
            }
            for c in ["stringu1", "stringu2", "string4"] {
                fields.push(format!("{c} char(16)"));
            }
            let keys = defs(&["UNIQUE (unique1)", "UNIQUE (unique2)"]);
            let mut keys = keys;
            keys.push(format!("INDEX {hundred} (hundred)"));
            create_table(name, &fields, &keys, engine)
        })
        .collect();
    let inserts: Vec<Step> = TABLES
        .iter()
        .flat_map(|(name, n, _)| {
            rows(*n)
                .into_iter()
                .map(move |r| Step::Sql(format!("insert into {name} values ({r})")))
        })
        .collect();
    let total = inserts.len() as u64;
    let mut bench = Vec::new();
    for (q, select_rows) in queries() {
        match select_rows {
            Some(n) => bench.extend(vec![Step::Rows(q, n); loops as usize]),
            None => bench.push(Step::Sql(q)),
        }
    }
    let mut insert = Op::new(G, "insert", total, inserts);
    for (name, n, _) in TABLES {
        insert = insert.then_rows(name, n);
    }
    vec![
        // The original prints `$#tables` (3) for its 4 tables: the count is what ran.
        Op::new(G, "create_table", 4, creates),
        insert,
        Op::new(
            G,
            "delete_big",
            1,
            vec![Step::sql("delete from Bprime where Bprime.unique2 >= 1000")],
        )
        .then_rows("Bprime", 1000),
        Op::new(G, "wisc_benchmark", bench.len() as u64, bench).then_rows("tenk1", 10_000),
        Op::setup(
            G,
            TABLES
                .iter()
                .map(|(name, _, _)| Step::Sql(format!("drop table {name}")))
                .collect(),
        ),
    ]
}

/// The rows of a table of `n`, as `values (...)` lists.
fn rows(n: u64) -> Vec<String> {
    let unique1 = permutation(n);
    (0..n)
        .map(|unique2| {
            let u = unique1[unique2 as usize];
            let nums: Vec<String> = [
                u,
                unique2,
                u % 2,
                u % 4,
                u % 10,
                u % 20,
                u % 100,
                u % 1000,
                u % 2000,
                u % 5000,
                u % 10_000,
                (u % 100) * 2 + 1,
                (u % 100) * 2,
            ]
            .iter()
            .map(u64::to_string)
            .collect();
            let four = ["AAAA", "HHHH", "OOOO", "VVVV"][(unique2 % 4) as usize];
            format!(
                "{},'{}','{}','{four}xxxxxxxxxxxx'",
                nums.join(","),
                string(u),
                string(unique2)
            )
        })
        .collect()
}

/// 0..n in a fixed shuffled order (Fisher-Yates driven by a 64-bit LCG).
fn permutation(n: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    for i in (1..v.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        v.swap(i, ((state >> 33) % (i as u64 + 1)) as usize);
    }
    v
}

/// Wisconsin's unique strings: the value in 7 base-26 letters, padded with `x`.
fn string(mut v: u64) -> String {
    let mut s = [b'A'; 7];
    for c in s.iter_mut().rev() {
        *c = b'A' + (v % 26) as u8;
        v /= 26;
    }
    format!("{}xxxxxxxxx", String::from_utf8_lossy(&s))
}

/// The query list, with the rows each select returns (selects run `loops` times, the
/// rest once). The double spaces are the originals' (an empty `$into_table`).
fn queries() -> Vec<(String, Option<u64>)> {
    let t2 = alias_list("t2");
    let b = alias_list("B");
    let o = alias_list("o");
    // The two pairs of inserts differ in their spacing only.
    let new_row = |u1: u64, u2: u64, spaced: bool| {
        let (a, b) = if spaced { (" ", " ") } else { ("", "") };
        format!(
            "insert into tenk1 (unique1, unique2, two, four, ten, twenty, hundred, thousand, \
             twothousand, fivethous, tenthous, odd, even,{a}stringu1,{a}stringu2, string4) values \
             ({u1}, {u2}, 0, 2, 0, 10, 50, 688, 1950, 4950, 9950, 1, 100, 'ron may choi',{b}'jae \
             kwang choi', 'u. c. berkeley')"
        )
    };
    let mut q: Vec<(String, Option<u64>)> = vec![
        ("select *  from tenk1 where (unique2 > 301) and (unique2 < 402)".into(), Some(100)),
        ("select *  from tenk1 where (unique1 > 647) and (unique1 < 1648)".into(), Some(1000)),
        ("select * from tenk1 where unique2 = 2001".into(), Some(1)),
        ("select * from tenk1 where (unique2 > 301) and (unique2 < 402)".into(), Some(100)),
        (format!("select t1.*, {t2}  from tenk1 t1, tenk1 t2 where (t1.unique2 = t2.unique2) and (t2.unique2 < 1000)"), Some(1000)),
        (format!("select t.*,{b}  from tenk1 t, Bprime B where t.unique2 = B.unique2"), Some(1000)),
        (format!("select t1.*,{o}  from onek o, tenk1 t1, tenk1 t2 where (o.unique2 = t1.unique2) and (t1.unique2 = t2.unique2) and (t1.unique2 < 1000) and (t2.unique2 < 1000)"), Some(1000)),
        ("select two, four, ten, twenty, hundred, string4  from tenk1".into(), Some(10_000)),
        ("select *  from onek".into(), Some(1000)),
        ("select MIN(unique2) as x  from tenk1".into(), Some(1)),
    ];
    q.push((new_row(10001, 74001, false), None));
    q.push((new_row(19991, 60001, false), None));
    q.push(("delete from tenk1 where tenk1.unique2 = 877".into(), None));
    q.push(("delete from tenk1 where tenk1.unique2 = 876".into(), None));
    q.push((
        "update tenk1 set unique2 = 10001 where tenk1.unique2 =1491".into(),
        None,
    ));
    q.push((
        "update tenk1 set unique2 = 10023 where tenk1.unique2 =1480".into(),
        None,
    ));
    q.push((new_row(20002, 70002, true), None));
    q.push((new_row(50002, 40002, true), None));
    q.push(("delete from tenk1 where tenk1.unique2 = 10001".into(), None));
    q.push(("delete from tenk1 where tenk1.unique2 = 900".into(), None));
    for (to, from) in [(10088, 187), (10003, 2000), (10020, 1974), (16001, 1140)] {
        q.push((
            format!("update tenk1 set unique2 = {to} where tenk1.unique2 ={from}"),
            None,
        ));
    }
    q
}

/// `x.unique1 AS xunique1,...`: every column of the second table under a prefixed alias.
fn alias_list(t: &str) -> String {
    let cols = [
        "unique1",
        "unique2",
        "two",
        "four",
        "ten",
        "twenty",
        "hundred",
        "thousand",
        "twothousand",
        "fivethous",
        "tenthous",
        "odd",
        "even",
        "stringu1",
        "stringu2",
        "string4",
    ];
    let sep = if t == "t2" { ", " } else { "," };
    cols.iter()
        .map(|c| format!("{t}.{c} AS {t}{c}"))
        .collect::<Vec<_>>()
        .join(sep)
        // One space in the original's onek list.
        .replace("AS oodd,o.even", "AS oodd, o.even")
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn originals_counts() {
        // 5000 loops (/5 small) of each of the 10 selects, the 14 changes once; 31000 rows.
        for (size, l) in [(Size::FULL, 5000u64), (Size::SMALL, 1000)] {
            assert_eq!(
                ops(&plan(size, "InnoDB")),
                [
                    ("create_table", 4, 4),
                    ("insert", 31_000, 31_000),
                    ("delete_big", 1, 1),
                    ("wisc_benchmark", 10 * l + 14, 10 * l as usize + 14),
                ]
            );
        }
    }

    #[test]
    fn data_and_statements() {
        let r = rows(1000);
        assert_eq!(r.len(), 1000);
        let mut u1: Vec<u64> = permutation(10_000);
        u1.sort();
        assert_eq!(u1, (0..10_000).collect::<Vec<_>>());
        assert!(
            r[1].contains(",1,") && r[1].ends_with("'AAAAAABxxxxxxxxx','HHHHxxxxxxxxxxxx'"),
            "{}",
            r[1]
        );
        let q = queries();
        assert_eq!(q.len(), 24);
        assert_eq!(q[10].0, "insert into tenk1 (unique1, unique2, two, four, ten, twenty, hundred, thousand, twothousand, fivethous, tenthous, odd, even,stringu1,stringu2, string4) values (10001, 74001, 0, 2, 0, 10, 50, 688, 1950, 4950, 9950, 1, 100, 'ron may choi','jae kwang choi', 'u. c. berkeley')");
        assert_eq!(q[16].0, "insert into tenk1 (unique1, unique2, two, four, ten, twenty, hundred, thousand, twothousand, fivethous, tenthous, odd, even, stringu1, stringu2, string4) values (20002, 70002, 0, 2, 0, 10, 50, 688, 1950, 4950, 9950, 1, 100, 'ron may choi', 'jae kwang choi', 'u. c. berkeley')");
        assert!(q[4]
            .0
            .starts_with("select t1.*, t2.unique1 AS t2unique1, t2.unique2 AS t2unique2,"));
        assert!(q[5]
            .0
            .starts_with("select t.*,B.unique1 AS Bunique1,B.unique2 AS Bunique2,"));
        let p = plan(Size::SMALL, "InnoDB");
        let Step::Sql(c) = &p[0].steps[0] else {
            panic!()
        };
        assert!(c.starts_with(
            "create table onek (unique1 int(5) NOT NULL,unique2 int(4) NOT NULL,two int(4),"
        ));
        assert!(c.ends_with("string4 char(16),UNIQUE (unique1),UNIQUE (unique2),INDEX hundred1 (hundred)) ENGINE=InnoDB"));
    }
}
