//! test-insert: 3 x loop_count rows inserted in order, in reverse and at random into a
//! table keyed on (id, id2) and id3, then read by key, by range, ordered, grouped, updated
//! and deleted; then a table of 16 keys, and multi-row inserts.

use super::super::plan::{create_table, defs, next_tmpvar, repeat, Op, Step};
use super::super::{Group, Prepare, Size};

const G: Group = Group::Insert;
/// Full-table reads and `update_big` loops ($small_loop_count).
const SMALL: u64 = 10;
/// server-cfg's query_size for MySQL: multi-row inserts fill statements up to it.
const QUERY_SIZE: usize = 1_000_000;

/// The sizes of one run of the group.
struct Sizes {
    /// $opt_loop_count: the table holds three times this many rows.
    loops: u64,
    many_keys: u64,
    range: u64,
    read_key: u64,
}

fn sizes(size: Size) -> Sizes {
    // 100000 loops; --small-test: /100, many keys a tenth of that, 10 range and read-key
    // loops. At least 100 loops ("some tests must have some data to work").
    let loops = size.count(100_000, 100).max(100);
    let (many_keys, range, read_key) = if size.small {
        (
            size.count(100_000, 1000),
            size.count(10, 1),
            size.count(10, 1),
        )
    } else {
        (loops, size.count(500, 1), loops)
    };
    Sizes {
        loops,
        many_keys,
        range: range.min(loops),
        read_key,
    }
}

/// The shuffled keys: `random[i]` for i < loops is a permutation of loops..2*loops, and
/// `random[loops]` is 0. Returns them with the generator's state, which later operations
/// go on drawing from.
fn random_keys(loops: u64) -> (Vec<i64>, i64) {
    let l = loops as i64;
    let mut random: Vec<i64> = (0..l).map(|i| i + l).chain([0]).collect();
    let mut tmpvar = 1;
    for i in 0..l {
        let swap = (next_tmpvar(&mut tmpvar, i, l) % l) as usize;
        random.swap(i as usize, swap);
    }
    (random, tmpvar)
}

/// The 20 range queries of `check_select_range` (`!id!` stands for the column) and the rows
/// each must return.
fn range_queries(loops: u64) -> Vec<(String, u64)> {
    let total = 3 * loops;
    let half = loops / 2;
    let q = [
        ("!id!=3 or !id!=2 or !id!=1 or !id!=4 or !id!=16 or !id!=10".to_string(), 6),
        (format!("!id!>={} or !id!<1", total - 1), 2),
        ("!id!>=1 and !id!<=2".into(), 2),
        ("(!id!>=1 and !id!<=2) or (!id!>=1 and !id!<=2)".into(), 2),
        ("!id!>=1 and !id!<=10 and !id!<=5".into(), 5),
        (format!("(!id!>0 and !id!<2) or !id!>={}", total - 1), 2),
        (
            format!(
                "(!id!>0 and !id!<2) or (!id!>= {half} and !id! <= {}) or !id! = {}",
                half + 2,
                half - 1
            ),
            5,
        ),
        ("(!id!>=5 and !id!<=10) or (!id!>=1 and !id!<=4)".into(), 10),
        ("(!id!=1 or !id!=2) and (!id!=3 or !id!=4)".into(), 0),
        ("(!id!=1 or !id!=2) and (!id!=2 or !id!=3)".into(), 1),
        ("(!id!=1 or !id!=5 or !id!=20 or !id!=40) and (!id!=1 or !id!>=20 or !id!=4)".into(), 3),
        ("((!id!=1 or !id!=3) or (!id!>1 and !id!<3)) and !id!<=2".into(), 2),
        ("(!id! >= 0 and !id! < 4) or (!id! >=4 and !id! < 6)".into(), 6),
        (
            "!id! <= -1 or (!id! >= 0 and !id! <= 5) or (!id! >=4 and !id! < 6) or (!id! >=6 and !id! <=7) or (!id!>7 and !id! <= 8)".into(),
            9,
        ),
        ("(!id!>=1 and !id!<=2 or !id!>=4 and !id!<=5) or (!id!>=0 and !id! <=10)".into(), 11),
        ("(!id!>=1 and !id!<=2 or !id!>=4 and !id!<=5) or (!id!>2 and !id! <=10)".into(), 10),
        ("(!id!>1 or !id! <1) and !id!<=2".into(), 2),
        ("!id! <= 2 and (!id!>1 or !id! <=1)".into(), 3),
        ("(!id!>=1 or !id! <1) and !id!<=2".into(), 3),
        ("(!id!>=1 or !id! <=2) and !id!<=2".into(), 3),
    ];
    q.into_iter()
        .map(|(w, n)| (format!("select * from bench1 where {w}"), n))
        .collect()
}

pub(crate) fn plan(size: Size, prepare: Prepare, engine: &str) -> Vec<Op> {
    let s = sizes(size);
    let (l, r) = (s.loops, s.range);
    let total = 3 * l;
    let (random, mut tmpvar) = random_keys(l);
    let ins = "insert into bench1 (id,id2,id3,dummy1) values ";
    let mut ops = Vec::new();
    let bench = |name: &str, keys: &[&str]| {
        create_table(
            name,
            &defs(&[
                "id int NOT NULL",
                "id2 int NOT NULL",
                "id3 int NOT NULL",
                "dummy1 char(30)",
            ]),
            &defs(keys),
            engine,
        )
    };
    ops.push(Op::setup(
        G,
        vec![bench(
            "bench1",
            &["primary key (id,id2)", "index ix_id3 (id3)"],
        )],
    ));

    let rows = insert_rows(ins, l, total, &random);
    ops.push(Op::new(G, "insert", total, rows).then_rows("bench1", total));

    let dups = (0..l as i64)
        .map(|i| {
            let k = next_tmpvar(&mut tmpvar, i, l as i64) % total as i64;
            Step::Duplicate(format!("{ins} ({k},{k},2,'D')"))
        })
        .collect();
    ops.push(Op::new(G, "insert_duplicates", l, dups).then_rows("bench1", total));

    ops.extend(select_ops(l, r, total, &random, prepare));

    for (col, name) in [("id", "select_range_prefix"), ("id3", "select_range_key2")] {
        ops.push(or_range(col, name, r, l, &mut tmpvar));
    }
    ops.extend(read_key_ops(l, total, s.read_key, &mut tmpvar));
    let ranges = range_queries(l);
    for (col, name) in [("id", "select_range_prefix"), ("id3", "select_range_key2")] {
        let steps = (0..r)
            .flat_map(|_| {
                ranges
                    .iter()
                    .map(|(q, n)| Step::Rows(q.replace("!id!", col), *n))
            })
            .collect();
        // sql-bench counts both halves of its (query, rows) list: 40 a loop.
        ops.push(Op::new(G, name, 40 * r, steps));
    }

    ops.push(select_group(l));
    ops.extend(group_ops(r, total));
    ops.extend(update_ops(l, r, total, &random));
    ops.extend(join_and_in_ops(l, r, total, engine, bench));
    ops.extend(delete_ops(l, &random));
    ops.extend(many_keys_ops(s.many_keys, &random, engine));
    ops.push(Op::setup(
        G,
        vec![bench(
            "bench1",
            &["primary key (id,id2)", "index index_id3 (id3)"],
        )],
    ));
    ops.push(Op::new(G, "multiple_value_insert", l, multi_value(l)).then_rows("bench1", l));
    ops.push(Op::setup(G, vec![Step::sql("drop table bench1")]));
    ops
}

/// prepared_select's and once_prepared_select's steps. DBD::MariaDB emulates prepare by
/// default (`Prepare::Emulated`): `prepare` sends nothing and each `execute` one text query,
/// the value of `bind_param` (given no SQL type) quoted as a string; on the server, each
/// prepared_select loop prepares, executes and closes, and once_prepared_select prepares
/// once and executes `l` times.
fn prepared_selects(l: u64, random: &[i64], prepare: Prepare) -> (Vec<Step>, Vec<Step>) {
    let keys = || (1..=l as usize).map(|i| random[i]);
    let text = |k: i64| format!("select * from bench1 where id={k}");
    match prepare {
        Prepare::Emulated => (
            keys().map(|k| Step::Sql(text(k))).collect(),
            keys()
                .map(|k| Step::Sql(format!("select * from bench1 where id='{k}'")))
                .collect(),
        ),
        Prepare::Server => {
            let mut once = vec![Step::Prepare("select * from bench1 where id=?".into())];
            once.extend(keys().map(Step::Execute));
            once.push(Step::Unprepare);
            (keys().map(|k| Step::Prepared(text(k))).collect(), once)
        }
    }
}

/// insert: the keys in order, in reverse order past them, then in random order.
fn insert_rows(ins: &str, l: u64, total: u64, random: &[i64]) -> Vec<Step> {
    let mut rows = Vec::new();
    rows.extend((0..l).map(|i| Step::Sql(format!("{ins}({i},{i},{i},'ABCDEFGHIJ')"))));
    rows.extend((0..l).map(|i| {
        let k = total - 1 - i;
        Step::Sql(format!("{ins}({k},{k},{k},'BCDEFGHIJK')"))
    }));
    rows.extend((0..l as usize).map(|i| {
        let k = random[i];
        Step::Sql(format!("{ins}({k},{k},{k},'CDEFGHIJKL')"))
    }));
    rows
}

/// prepared_select, once_prepared_select, select_big, the order_by operations and
/// select_diff_key: none draws from the random sequence.
fn select_ops(l: u64, r: u64, total: u64, random: &[i64], prepare: Prepare) -> Vec<Op> {
    let mut ops = Vec::new();
    let (prepared, once) = prepared_selects(l, random, prepare);
    ops.push(Op::new(G, "prepared_select", l, prepared));
    ops.push(Op::new(G, "once_prepared_select", l, once));

    ops.push(Op::new(
        G,
        "select_big",
        SMALL,
        repeat(SMALL, |_| Step::Rows("select id from bench1".into(), total)),
    ));
    for (name, q) in [
        (
            "order_by_big_key",
            "select id,id2 from bench1 order by id,id2",
        ),
        (
            "order_by_big_key_desc",
            "select id,id2 from bench1 order by id desc, id2 desc",
        ),
        (
            "order_by_big_key_prefix",
            "select id from bench1 order by id desc",
        ),
        ("order_by_big_key2", "select id3 from bench1 order by id3"),
        (
            "order_by_big_key_diff",
            "select id2 from bench1 order by id3",
        ),
        ("order_by_big", "select id from bench1 order by id2,id3"),
    ] {
        ops.push(Op::new(G, name, SMALL, repeat(SMALL, |_| Step::sql(q))));
    }
    let ranged = |name, f: &dyn Fn(u64, u64) -> String| {
        Op::new(
            G,
            name,
            r,
            (1..=r).map(|i| Step::Sql(f(i, l / r * i))).collect(),
        )
    };
    ops.push(ranged("order_by_range", &|i, start| {
        format!(
            "select dummy1 from bench1 where id>={start} and id <= {} order by id3",
            start + i
        )
    }));
    ops.push(ranged("order_by_key_prefix", &|i, start| {
        format!(
            "select dummy1 from bench1 where id>={start} and id <= {} order by id",
            start + i
        )
    }));
    ops.push(ranged("order_by_key2_diff", &|_, start| {
        format!(
            "select id2 from bench1 where id3>={start} and id3 <= {} order by id3",
            start + r
        )
    }));
    ops.push(Op::new(
        G,
        "select_diff_key",
        r,
        (1..=r as usize)
            .map(|i| {
                Step::Sql(format!(
                    "select id2 from bench1 where id={i} or id3={}",
                    random[i]
                ))
            })
            .collect(),
    ));
    ops
}

/// The select_key operations: each key read twice, found and (past the last key) not.
fn read_key_ops(l: u64, total: u64, read_key: u64, tmpvar: &mut i64) -> Vec<Op> {
    let mut ops = Vec::new();
    for (sel, col, col2, name) in [
        ("*", "id", None, "select_key_prefix"),
        ("*", "id", Some("id2"), "select_key"),
        ("id,id2", "id", Some("id2"), "select_key_return_key"),
        ("*", "id3", None, "select_key2"),
        ("id3", "id3", None, "select_key2_return_key"),
        ("id,id2", "id3", None, "select_key2_return_prim"),
    ] {
        let mut steps = Vec::new();
        for i in 1..=read_key as i64 {
            let k = next_tmpvar(tmpvar, i, l as i64) % total as i64;
            let q = |k: i64| match col2 {
                Some(c2) => format!("select {sel} from bench1 where {col}={k} and {c2}={k}"),
                None => format!("select {sel} from bench1 where {col}={k}"),
            };
            // The first finds its row, the second (past the last key) none.
            steps.push(Step::Sql(q(k)));
            steps.push(Step::Rows(q(k + total as i64), 0));
        }
        ops.push(Op::new(G, name, 2 * read_key, steps));
    }
    ops
}

/// `check_or_range`: `col = 1 or col = ...` lists of 0, 12, 24, 36 and 48 terms, as OR,
/// as IN and with an extra range, until the loop count (a multiple of 15) is reached.
fn or_range(col: &str, name: &'static str, range: u64, loops: u64, tmpvar: &mut i64) -> Op {
    const COLUMNS: u64 = 48;
    let mut target = range * 10 + 15 - 1;
    target -= target % 15;
    let mut steps = Vec::new();
    while (steps.len() as u64) < target {
        for rowcnt in (0..=COLUMNS).step_by((COLUMNS / 4) as usize) {
            let mut terms = vec!["1".to_string()];
            for i in 1..rowcnt as i64 {
                let t = next_tmpvar(tmpvar, i, loops as i64) % (loops as i64 * 4);
                terms.push(t.to_string());
            }
            let or_part = format!(
                "{col} = 1{}",
                terms[1..]
                    .iter()
                    .map(|t| format!(" or {col}={t}"))
                    .collect::<String>()
            );
            let q = "select * from bench1 where ";
            steps.push(Step::Sql(format!("{q}{or_part}")));
            steps.push(Step::Sql(format!("{q}{col} IN ({})", terms.join(","))));
            steps.push(Step::Sql(format!("{q}({or_part}) and {col} < 10")));
        }
    }
    let n = steps.len() as u64;
    Op::new(G, name, n, steps)
}

/// `select_group`: count, min, max, sum, avg and GROUP BY on the whole table, 10 times.
fn select_group(l: u64) -> Op {
    let mut count = 1;
    let mut steps = Vec::new();
    for _ in 0..SMALL {
        steps.push(Step::Rows("select count(*) from bench1".into(), 1));
        count += 7;
        for q in [
            "select min(id) from bench1",
            "select max(id) from bench1",
            "select sum(id+0.0) from bench1",
            "select min(id3),max(id3),sum(id3-0.0) from bench1",
            "select min(dummy1),max(dummy1) from bench1",
        ] {
            steps.push(Step::sql(q));
        }
        count += 1;
        steps.push(Step::Sql(format!(
            "select count(*) from bench1 where id >= {}",
            2 * l
        )));
        count += 1;
        steps.push(Step::sql(
            "select count(*),sum(id+0.0),min(id),max(id),avg(id-0.0) from bench1",
        ));
        count += 1;
        steps.push(Step::Rows(
            "select id % 10 as last_digit,count(*) from bench1 group by last_digit".into(),
            10,
        ));
        count += 1;
        steps.push(Step::Rows(
            format!("select id,id3,dummy1 from bench1 where id < 100+{count}-{count} group by id,id3,dummy1 order by id desc,id3,dummy1"),
            100,
        ));
    }
    Op::new(G, "select_group", count, steps)
}

/// MIN/MAX on keys, COUNT with ranges, COUNT(DISTINCT).
fn group_ops(r: u64, total: u64) -> Vec<Op> {
    let min_max = |name, n: u64, c: &str, c2: &str| {
        let steps: Vec<Step> = (1..=n)
            .flat_map(|t| {
                [
                    format!("select min({c}) from bench1"),
                    format!("select max({c}) from bench1"),
                    format!("select min({c2}) from bench1 where {c}={t}"),
                    format!("select max({c2}) from bench1 where {c}={t}"),
                    format!("select min(dummy1) from bench1 where {c}={t}"),
                    format!("select max(dummy1) from bench1 where {c}={t}"),
                ]
            })
            .map(Step::Sql)
            .collect();
        Op::new(G, name, steps.len() as u64, steps)
    };
    // Perl steps by total/100, a fraction when total is no multiple of 100: the same 100
    // bounds, rounded down.
    let hundred = |f: &dyn Fn(u64) -> String| repeat(100, |k| Step::Sql(f(k * total / 100)));
    vec![
        min_max("min_max_on_key", r * 5, "id", "id2"),
        min_max("min_max", SMALL, "id2", "id3"),
        Op::new(
            G,
            "count_on_key",
            100,
            hundred(&|t| format!("select count(id) from bench1 where id < {t}")),
        ),
        Op::new(
            G,
            "count",
            100,
            hundred(&|t| format!("select count(dummy1) from bench1 where id2 < {t}")),
        ),
        Op::new(
            G,
            "count_distinct_big",
            2 * SMALL,
            (0..SMALL)
                .flat_map(|_| {
                    [
                        Step::sql("select count(distinct dummy1) from bench1"),
                        Step::sql("select dummy1,count(distinct id) from bench1 group by dummy1"),
                    ]
                })
                .collect(),
        ),
    ]
}

fn update_ops(l: u64, r: u64, total: u64, random: &[i64]) -> Vec<Op> {
    let half = l / 2;
    let of_key = (0..half as usize)
        .map(|i| {
            let k = l as i64 + random[i];
            Step::Sql(format!("update bench1 set id3=-{k} where id3={k}"))
        })
        .collect();
    let step = (l / r + 1) as usize;
    let mut big: Vec<Step> = (0..l)
        .step_by(step)
        .map(|i| {
            Step::Sql(format!(
                "update bench1 set id3= 0-id3 where id3 >= 0 and id3 <= {i}"
            ))
        })
        .collect();
    big.push(Step::Sql(format!(
        "update bench1 set id3= 0-id3 where id3 >= 0 and id3 < {l}"
    )));
    big.push(Step::Sql(format!(
        "update bench1 set id3= 0-id3 where id3 >= {l} and id3 < {}",
        2 * l
    )));
    let big_count = big.len() as u64 + 1;
    // The original checks (inside the timing) that all but 1 + loops - loops/2 keys flipped.
    big.push(Step::sql("select count(*) from bench1 where id3>=0"));
    big.push(Step::sql(
        "update bench1 set id3=floor((0-id3)/20) where id3<0",
    ));
    let with_key = || {
        repeat(total, |i| {
            Step::Sql(format!(
                "update bench1 set dummy1='updated' where id={i} and id2={i}"
            ))
        })
    };
    vec![
        Op::new(G, "update_of_key", half, of_key),
        Op::new(G, "update_of_key_big", big_count, big),
        Op::new(G, "update_with_key", total, with_key()),
        Op::new(G, "update_with_key_record_unchanged", total, with_key()),
        Op::new(
            G,
            "update_with_key_prefix",
            l,
            (1..total)
                .step_by(3)
                .map(|i| {
                    Step::Sql(format!(
                        "update bench1 set dummy1='really updated' where id={i}"
                    ))
                })
                .collect(),
        ),
        Op::new(
            G,
            "update_big",
            SMALL,
            repeat(SMALL, |i| {
                Step::Sql(format!("update bench1 set dummy1='updated {i}'"))
            }),
        )
        .then_rows("bench1", total),
    ]
}

fn join_and_in_ops(
    l: u64,
    r: u64,
    total: u64,
    engine: &str,
    bench: impl Fn(&str, &[&str]) -> Step,
) -> Vec<Op> {
    let mut ops = outer_join_ops(engine);
    ops.extend(in_list_ops(l, r));
    ops.extend(insert_select_ops(total, bench));
    ops
}

/// The outer joins of bench1 on itself, then bench2 created for the IN lists.
fn outer_join_ops(engine: &str) -> Vec<Op> {
    let join = "from bench1 as a left outer join bench1 as b on (a.id2=b.id3)";
    let each = |name, q: String| Op::new(G, name, SMALL, repeat(SMALL, |_| Step::Sql(q.clone())));
    vec![
        each("outer_join_on_key", format!("select count(*) {join}")),
        each(
            "outer_join",
            format!("select count(a.dummy1),count(b.dummy1) {join}"),
        ),
        each(
            "outer_join_found",
            format!("select count(a.dummy1),count(b.dummy1) {join} where b.id3 is not null"),
        ),
        // The original prints $range_loop_count here but runs $small_loop_count loops.
        each(
            "outer_join_not_found",
            format!("select count(a.dummy1),count(b.dummy1) {join} where b.id3 is null"),
        ),
        Op::setup(
            G,
            vec![create_table(
                "bench2",
                &defs(&["id int NOT NULL"]),
                &defs(&["primary key (id)"]),
                engine,
            )],
        ),
    ]
}

/// IN lists of 10, 100 and 1000 keys (at most (query_size - 50) / 6 and loops), each as a
/// list and as a join with bench2 holding the keys.
fn in_list_ops(l: u64, r: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    let max_tests = ((QUERY_SIZE as u64 - 50) / 6).min(l);
    for (from, to) in [
        (1, 10),
        (11, 100.min(max_tests)),
        (101, 1000.min(max_tests)),
    ] {
        if from >= to {
            continue;
        }
        ops.push(Op::setup(
            G,
            (from..=to)
                .map(|i| Step::Sql(format!("insert into bench2 values({i})")))
                .collect(),
        ));
        let list: Vec<String> = (1..=to).map(|i| i.to_string()).collect();
        let q = format!(
            "SELECT bench1.* FROM bench1 WHERE id IN ({})",
            list.join(",")
        );
        ops.push(Op::new(
            G,
            "select_in",
            r,
            repeat(r, |_| Step::Rows(q.clone(), to)),
        ));
        let j = "SELECT bench1.* FROM bench2 left outer join bench1 on (bench1.id=bench2.id)";
        ops.push(Op::new(
            G,
            "select_join_in",
            r,
            repeat(r, |_| Step::Rows(j.into(), to)),
        ));
    }
    ops
}

/// bench1 copied into a table with one key and one with two, then both dropped.
fn insert_select_ops(total: u64, bench: impl Fn(&str, &[&str]) -> Step) -> Vec<Op> {
    vec![
        Op::setup(
            G,
            vec![
                Step::sql("DROP TABLE bench2"),
                bench("bench2", &["primary key (id,id2)"]),
                bench("bench3", &["primary key (id,id2)", "index index_id3 (id3)"]),
            ],
        ),
        Op::new(
            G,
            "insert_select_1_key",
            1,
            vec![Step::sql("INSERT INTO bench2 SELECT * from bench1")],
        )
        .then_rows("bench2", total),
        Op::new(
            G,
            "insert_select_2_keys",
            1,
            vec![Step::sql("INSERT INTO bench3 SELECT * from bench1")],
        )
        .then_rows("bench3", total),
        Op::setup(
            G,
            vec![
                Step::sql("DROP TABLE bench2"),
                Step::sql("DROP TABLE bench3"),
            ],
        ),
    ]
}

fn delete_ops(l: u64, random: &[i64]) -> Vec<Op> {
    let key: Vec<Step> = (0..l as usize)
        .step_by(10)
        .map(|i| {
            Step::Sql(format!(
                "delete from bench1 where id3={}",
                l as i64 + random[i]
            ))
        })
        .collect();
    let mut range: Vec<Step> = (0..10)
        .map(|k| {
            Step::Sql(format!(
                "delete from bench1 where id3 >= 0 and id3 <= {}",
                k * l / 10
            ))
        })
        .collect();
    range.push(Step::Sql(format!(
        "delete from bench1 where id3 >= 0 and id3 <= {l}"
    )));
    range.push(Step::Sql(format!(
        "delete from bench1 where id >= {l} and id <= {}",
        2 * l
    )));
    range.push(Step::Sql(format!(
        "delete from bench1 where id3 < {}",
        3 * l
    )));
    vec![
        Op::new(G, "delete_key", key.len() as u64, key),
        // sql-bench counts the ten range deletes and two of the last three.
        Op::new(G, "delete_range", 12, range).then_rows("bench1", 0),
        Op::setup(G, vec![Step::sql("drop table bench1")]),
    ]
}

/// A table with 16 keys, its primary key of 16 parts.
fn many_keys_ops(n: u64, random: &[i64], engine: &str) -> Vec<Op> {
    let mut fields = defs(&[
        "field1 tinyint not null",
        "field_search tinyint not null",
        "field2 mediumint not null",
        "field3 smallint not null",
        "field4 char(16) not null",
        "field5 integer not null",
        "field6 float not null",
        "field7 double not null",
    ]);
    fields.extend((8..=16).map(|i| format!("field{i} char(6) not null")));
    let primary: Vec<String> = (1..=16).map(|i| format!("field{i}")).collect();
    let mut keys = vec![
        format!("primary key ({})", primary.join(",")),
        "index index2 (field_search)".to_string(),
    ];
    keys.extend((3..=16).map(|i| format!("index index{i} (field{i})")));
    let inserts = (0..n as usize)
        .map(|i| {
            let (id, rand) = (i & 127, random[i]);
            let chars = vec![format!("'{rand}'"); 9].join(",");
            Step::Sql(format!(
                "insert into bench1 values ({id},{id},{rand},{},'ABCDEF{rand}',0,{rand},{rand}.0,{chars})",
                i & 32767
            ))
        })
        .collect();
    vec![
        Op::setup(G, vec![create_table("bench1", &fields, &keys, engine)]),
        Op::new(G, "insert_key", n, inserts).then_rows("bench1", n),
        Op::new(
            G,
            "update_of_primary_key_many_keys",
            256,
            repeat(256, |i| {
                Step::Sql(format!("update bench1 set field5=1 where field_search={i}"))
            }),
        ),
        Op::new(
            G,
            "delete_big_many_keys",
            128,
            repeat(128, |i| {
                Step::Sql(format!("delete from bench1 where field_search = {i}"))
            }),
        )
        .then_rows("bench1", 0),
        // The original's timing of this one starts with delete_big_many_keys; here it is
        // its own statement's.
        Op::new(
            G,
            "delete_all_many_keys",
            1,
            vec![Step::sql("delete from bench1 where field1 > 0")],
        ),
        Op::setup(G, vec![Step::sql("drop table bench1")]),
    ]
}

/// Multi-row INSERTs of all rows, each statement filled up to the query size (the
/// original compares the loop number's length, not the row's, with the space left).
fn multi_value(l: u64) -> Vec<Step> {
    let head = "insert into bench1 values ";
    let mut out = Vec::new();
    let mut res = head.to_string();
    for i in 0..l {
        let row = format!("({i},{i},{i},'EFGHIJKLM'),");
        if i.to_string().len() + res.len() < QUERY_SIZE {
            res.push_str(&row);
        } else {
            res.pop();
            out.push(Step::Sql(std::mem::replace(
                &mut res,
                format!("{head}{row}"),
            )));
        }
    }
    res.pop();
    out.push(Step::Sql(res));
    out
}

#[cfg(test)]
mod tests {
    use super::super::expect::ops;
    use super::*;

    #[test]
    fn keys_are_a_permutation() {
        let (random, _) = random_keys(1000);
        let mut sorted = random[..1000].to_vec();
        sorted.sort();
        assert_eq!(sorted, (1000..2000).collect::<Vec<i64>>());
        assert_eq!(random[1000], 0);
    }

    #[test]
    fn originals_counts() {
        // --small-test: 1000 loops (3000 rows), 100 many-keys rows, 10 range and read-key
        // loops; full: 100000, 100000, 500, 100000. Counts as sql-bench prints them.
        let p = plan(Size::SMALL, Prepare::Server, "InnoDB");
        let got = ops(&p);
        let want: &[(&str, u64, usize)] = &[
            ("insert", 3000, 3000),
            ("insert_duplicates", 1000, 1000),
            ("prepared_select", 1000, 1000),
            ("once_prepared_select", 1000, 1002),
            ("select_big", 10, 10),
            ("order_by_big_key", 10, 10),
            ("order_by_big_key_desc", 10, 10),
            ("order_by_big_key_prefix", 10, 10),
            ("order_by_big_key2", 10, 10),
            ("order_by_big_key_diff", 10, 10),
            ("order_by_big", 10, 10),
            ("order_by_range", 10, 10),
            ("order_by_key_prefix", 10, 10),
            ("order_by_key2_diff", 10, 10),
            ("select_diff_key", 10, 10),
            ("select_range_prefix", 105, 105),
            ("select_range_key2", 105, 105),
            ("select_key_prefix", 20, 20),
            ("select_key", 20, 20),
            ("select_key_return_key", 20, 20),
            ("select_key2", 20, 20),
            ("select_key2_return_key", 20, 20),
            ("select_key2_return_prim", 20, 20),
            ("select_range_prefix", 400, 200),
            ("select_range_key2", 400, 200),
            ("select_group", 111, 100),
            ("min_max_on_key", 300, 300),
            ("min_max", 60, 60),
            ("count_on_key", 100, 100),
            ("count", 100, 100),
            ("count_distinct_big", 20, 20),
            ("update_of_key", 500, 500),
            ("update_of_key_big", 13, 14),
            ("update_with_key", 3000, 3000),
            ("update_with_key_record_unchanged", 3000, 3000),
            ("update_with_key_prefix", 1000, 1000),
            ("update_big", 10, 10),
            ("outer_join_on_key", 10, 10),
            ("outer_join", 10, 10),
            ("outer_join_found", 10, 10),
            ("outer_join_not_found", 10, 10),
            ("select_in", 10, 10),
            ("select_join_in", 10, 10),
            ("select_in", 10, 10),
            ("select_join_in", 10, 10),
            ("select_in", 10, 10),
            ("select_join_in", 10, 10),
            ("insert_select_1_key", 1, 1),
            ("insert_select_2_keys", 1, 1),
            ("delete_key", 100, 100),
            ("delete_range", 12, 13),
            ("insert_key", 100, 100),
            ("update_of_primary_key_many_keys", 256, 256),
            ("delete_big_many_keys", 128, 128),
            ("delete_all_many_keys", 1, 1),
            ("multiple_value_insert", 1000, 1),
        ];
        assert_eq!(got, want);
        // Full size: the counts of the seed's table (MySQL 5.1, sql-bench 2.15) that this
        // group alone produces.
        let full = ops(&plan(Size::FULL, Prepare::Server, "InnoDB"));
        let get = |n: &str| full.iter().filter(|o| o.0 == n).map(|o| o.1).sum::<u64>();
        for (name, n) in [
            ("insert_duplicates", 100_000),
            ("insert_key", 100_000),
            ("select_key", 200_000),
            ("select_key2", 200_000),
            ("select_key_prefix", 200_000),
            ("select_key2_return_prim", 200_000),
            ("select_range_prefix", 25_010),
            ("select_range_key2", 25_010),
            ("update_of_key", 50_000),
            ("update_of_key_big", 501),
            ("update_with_key", 300_000),
            ("update_with_key_prefix", 100_000),
            ("update_of_primary_key_many_keys", 256),
            ("delete_big_many_keys", 128),
            ("delete_key", 10_000),
            ("delete_range", 12),
            ("order_by_big", 10),
            ("order_by_range", 500),
            ("select_diff_key", 500),
            ("multiple_value_insert", 100_000),
            ("once_prepared_select", 100_000),
            ("prepared_select", 100_000),
            ("min_max", 60),
            ("outer_join_on_key", 10),
            ("insert_select_1_key", 1),
        ] {
            assert_eq!(get(name), n, "{name}");
        }
    }

    #[test]
    fn prepare_emulated_as_dbd_or_on_the_server() {
        let op = |p: &[Op], name: &str| p.iter().find(|o| o.name == name).unwrap().clone();
        let key = random_keys(1000).0[1];
        // DBD::MariaDB's default: one text query per execute, nothing for prepare.
        let emulated = plan(Size::SMALL, Prepare::Emulated, "InnoDB");
        let (ps, once) = (
            op(&emulated, "prepared_select"),
            op(&emulated, "once_prepared_select"),
        );
        assert_eq!((ps.loops, ps.steps.len()), (1000, 1000));
        assert_eq!((once.loops, once.steps.len()), (1000, 1000));
        assert_eq!(
            ps.steps[0],
            Step::Sql(format!("select * from bench1 where id={key}"))
        );
        assert_eq!(
            once.steps[0],
            Step::Sql(format!("select * from bench1 where id='{key}'"))
        );
        for o in [&ps, &once] {
            let c = o.com_counters();
            assert_eq!(c.get("Questions"), Some(&1000), "{}", o.name);
            assert_eq!(c.get("Com_select"), Some(&1000), "{}", o.name);
            assert_eq!(c.get("Com_stmt_prepare"), None, "{}", o.name);
        }
        // On the server: prepare, execute and close per loop; once prepared, executed 1000x.
        let server = plan(Size::SMALL, Prepare::Server, "InnoDB");
        let ps = op(&server, "prepared_select");
        assert_eq!(
            ps.steps[0],
            Step::Prepared(format!("select * from bench1 where id={key}"))
        );
        assert_eq!(ps.com_counters().get("Com_stmt_prepare"), Some(&1000));
        let once = op(&server, "once_prepared_select");
        assert_eq!(once.steps[1], Step::Execute(key));
        assert_eq!(once.com_counters().get("Com_stmt_execute"), Some(&1000));
        // Everything else is the same either way.
        let rest = |p: &[Op]| {
            ops(p)
                .into_iter()
                .filter(|o| !o.0.contains("prepared_select"))
                .collect::<Vec<_>>()
        };
        assert_eq!(rest(&emulated), rest(&server));
    }

    #[test]
    fn statements() {
        let p = plan(Size::SMALL, Prepare::Emulated, "InnoDB");
        let op = |name: &str| p.iter().find(|o| o.name == name).unwrap();
        assert_eq!(
            op("insert").steps[1000],
            Step::sql(
                "insert into bench1 (id,id2,id3,dummy1) values (2999,2999,2999,'BCDEFGHIJK')"
            )
        );
        let Step::Duplicate(d) = &op("insert_duplicates").steps[0] else {
            panic!()
        };
        assert!(
            d.starts_with("insert into bench1 (id,id2,id3,dummy1) values  ("),
            "{d}"
        );
        assert_eq!(
            op("order_by_range").steps[0],
            Step::sql("select dummy1 from bench1 where id>=100 and id <= 101 order by id3")
        );
        assert_eq!(
            op("order_by_key2_diff").steps[1],
            Step::sql("select id2 from bench1 where id3>=200 and id3 <= 210 order by id3")
        );
        let Step::Sql(or) = &op("select_range_prefix").steps[3] else {
            panic!()
        };
        assert!(
            or.starts_with("select * from bench1 where id = 1 or id="),
            "{or}"
        );
        assert_eq!(or.matches(" or ").count(), 11);
        let Step::Sql(inl) = &op("select_range_prefix").steps[4] else {
            panic!()
        };
        assert!(
            inl.starts_with("select * from bench1 where id IN (1,"),
            "{inl}"
        );
        assert_eq!(
            op("delete_range").steps[12],
            Step::sql("delete from bench1 where id3 < 3000")
        );
        let Step::Sql(k) = &op("insert_key").steps[1] else {
            panic!()
        };
        assert!(k.starts_with("insert into bench1 values (1,1,"), "{k}");
        let Step::Sql(m) = &op("multiple_value_insert").steps[0] else {
            panic!()
        };
        assert!(m.starts_with("insert into bench1 values (0,0,0,'EFGHIJKLM'),(1,1,1,"));
        assert!(m.ends_with("(999,999,999,'EFGHIJKLM')"));
    }
}
