//! Statement texts and the per-event plan of every sysbench 1.0 OLTP test (the Lua scripts'
//! `prepare_statements` and `event`), as data the driver executes.

use rand::Rng;

use super::rand::{uniform, KeyDist};
use super::schema::{c_value, pad_value};
use crate::servers::sql::{AutoId, Param};
use crate::workloads::oltp::spec::{OltpSpec, OltpTest};

/// A prepared statement kind (one per table, as sysbench prepares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    RandomPoints,
    RandomRanges,
}

impl Kind {
    pub(crate) const COUNT: usize = 11;

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn sql(self, table: u32, spec: &OltpSpec) -> String {
        let t = table;
        match self {
            Kind::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Kind::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Kind::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Kind::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            Kind::RandomPoints => {
                let points = vec!["?"; spec.random_points.max(1) as usize].join(", ");
                format!("SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({points})")
            }
            Kind::RandomRanges => {
                let ranges =
                    vec!["k BETWEEN ? AND ?"; spec.number_of_ranges.max(1) as usize].join(" OR ");
                format!("SELECT count(k) FROM sbtest1 WHERE {ranges}")
            }
        }
    }
}

/// Statement kinds a test prepares on every connection (for every table).
pub(crate) fn kinds(spec: &OltpSpec) -> Vec<Kind> {
    let ranges = || {
        if spec.range_selects {
            vec![
                Kind::SimpleRange,
                Kind::SumRange,
                Kind::OrderRange,
                Kind::DistinctRange,
            ]
        } else {
            vec![]
        }
    };
    let writes = vec![
        Kind::IndexUpdate,
        Kind::NonIndexUpdate,
        Kind::Delete,
        Kind::Insert,
    ];
    match spec.test {
        OltpTest::OltpReadWrite => [vec![Kind::PointSelect], ranges(), writes].concat(),
        OltpTest::OltpReadOnly => [vec![Kind::PointSelect], ranges()].concat(),
        OltpTest::OltpWriteOnly => writes,
        OltpTest::OltpPointSelect => vec![Kind::PointSelect],
        OltpTest::OltpUpdateIndex => vec![Kind::IndexUpdate],
        OltpTest::OltpUpdateNonIndex => vec![Kind::NonIndexUpdate],
        OltpTest::OltpDelete => vec![Kind::Delete],
        OltpTest::OltpInsert => vec![],
        OltpTest::SelectRandomPoints => vec![Kind::RandomPoints],
        OltpTest::SelectRandomRanges => vec![Kind::RandomRanges],
    }
}

/// Tables whose statements are prepared: select_random_* only use sbtest1.
pub(crate) fn prepared_tables(spec: &OltpSpec) -> u32 {
    match spec.test {
        OltpTest::SelectRandomPoints | OltpTest::SelectRandomRanges => 1,
        _ => spec.tables,
    }
}

/// One statement of an event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    Begin,
    Commit,
    Exec {
        kind: Kind,
        table: u32,
        params: Vec<Param>,
    },
    /// oltp_insert sends a plain text query, as sysbench does.
    Text(String),
}

/// What one worker needs to generate its events.
pub(crate) struct EventGen<'a> {
    pub(crate) spec: &'a OltpSpec,
    pub(crate) dist: KeyDist,
    /// sysbench's thread id and thread count (select_random_* slice the key space by them).
    pub(crate) tid: u32,
    pub(crate) threads: u32,
    pub(crate) auto_id: AutoId,
}

impl EventGen<'_> {
    fn table<R: Rng>(&self, rng: &mut R) -> u32 {
        uniform(rng, 1, self.spec.tables.max(1))
    }

    fn id<R: Rng>(&self, rng: &mut R) -> u32 {
        self.dist.sample(rng, 1, self.spec.table_size.max(1))
    }

    /// Fill `out` with the statements of one event; `unique` yields oltp_insert's ids when
    /// auto_inc is off.
    pub(crate) fn event<R: Rng>(
        &self,
        rng: &mut R,
        unique: impl FnOnce() -> u32,
        out: &mut Vec<Step>,
    ) {
        out.clear();
        let s = self.spec;
        let trx = s.test.transactional() && !s.skip_trx;
        if trx {
            out.push(Step::Begin);
        }
        match s.test {
            OltpTest::OltpReadWrite => {
                self.point_selects(rng, s.point_selects, out);
                self.ranges(rng, out);
                self.writes(rng, out);
            }
            OltpTest::OltpReadOnly => {
                self.point_selects(rng, s.point_selects, out);
                self.ranges(rng, out);
            }
            OltpTest::OltpWriteOnly => self.writes(rng, out),
            OltpTest::OltpPointSelect => self.point_selects(rng, 1, out),
            OltpTest::OltpUpdateIndex => self.index_updates(rng, out),
            OltpTest::OltpUpdateNonIndex => self.non_index_updates(rng, out),
            OltpTest::OltpDelete => {
                let table = self.table(rng);
                let id = self.id(rng);
                out.push(exec(Kind::Delete, table, vec![id.into()]));
            }
            OltpTest::OltpInsert => {
                let table = self.table(rng);
                let k = self.id(rng);
                if s.auto_inc && self.auto_id == AutoId::Omitted {
                    out.push(Step::Text(format!(
                        "INSERT INTO sbtest{table} (k, c, pad) VALUES ({k}, '{}', '{}')",
                        c_value(rng),
                        pad_value(rng)
                    )));
                } else {
                    let id: i64 = if s.auto_inc {
                        0
                    } else {
                        unique() as i64 - 2_147_483_648
                    };
                    out.push(Step::Text(format!(
                        "INSERT INTO sbtest{table} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
                        c_value(rng),
                        pad_value(rng)
                    )));
                }
            }
            OltpTest::SelectRandomPoints => {
                let (lo, hi) = self.slice();
                let params = (0..s.random_points.max(1))
                    .map(|_| self.dist.sample(rng, lo, hi).into())
                    .collect();
                out.push(exec(Kind::RandomPoints, 1, params));
            }
            OltpTest::SelectRandomRanges => {
                let (lo, hi) = self.slice();
                let mut params = Vec::with_capacity(2 * s.number_of_ranges as usize);
                for _ in 0..s.number_of_ranges.max(1) {
                    let v = self.dist.sample(rng, lo, hi);
                    params.push(v.into());
                    params.push((v + s.delta).into());
                }
                out.push(exec(Kind::RandomRanges, 1, params));
            }
        }
        if trx {
            out.push(Step::Commit);
        }
    }

    /// select_random_*: this thread's `[rlen*tid, rlen*(tid+1)]` slice of the key space.
    fn slice(&self) -> (u32, u32) {
        let rlen = self.spec.table_size / self.threads.max(1);
        let lo = rlen * (self.tid % self.threads.max(1));
        (lo, lo + rlen)
    }

    fn point_selects<R: Rng>(&self, rng: &mut R, n: u32, out: &mut Vec<Step>) {
        let table = self.table(rng);
        for _ in 0..n {
            let id = self.id(rng);
            out.push(exec(Kind::PointSelect, table, vec![id.into()]));
        }
    }

    fn ranges<R: Rng>(&self, rng: &mut R, out: &mut Vec<Step>) {
        let s = self.spec;
        if !s.range_selects {
            return;
        }
        for (kind, n) in [
            (Kind::SimpleRange, s.simple_ranges),
            (Kind::SumRange, s.sum_ranges),
            (Kind::OrderRange, s.order_ranges),
            (Kind::DistinctRange, s.distinct_ranges),
        ] {
            let table = self.table(rng);
            for _ in 0..n {
                let id = self.id(rng);
                let hi = id as u64 + s.range_size as u64 - 1;
                out.push(exec(kind, table, vec![id.into(), hi.into()]));
            }
        }
    }

    fn index_updates<R: Rng>(&self, rng: &mut R, out: &mut Vec<Step>) {
        let table = self.table(rng);
        for _ in 0..self.spec.index_updates {
            let id = self.id(rng);
            out.push(exec(Kind::IndexUpdate, table, vec![id.into()]));
        }
    }

    fn non_index_updates<R: Rng>(&self, rng: &mut R, out: &mut Vec<Step>) {
        let table = self.table(rng);
        for _ in 0..self.spec.non_index_updates {
            let c = c_value(rng);
            let id = self.id(rng);
            out.push(exec(Kind::NonIndexUpdate, table, vec![c.into(), id.into()]));
        }
    }

    fn writes<R: Rng>(&self, rng: &mut R, out: &mut Vec<Step>) {
        self.index_updates(rng, out);
        self.non_index_updates(rng, out);
        let table = self.table(rng);
        for _ in 0..self.spec.delete_inserts {
            let id = self.id(rng);
            let k = self.id(rng);
            out.push(exec(Kind::Delete, table, vec![id.into()]));
            out.push(exec(
                Kind::Insert,
                table,
                vec![
                    id.into(),
                    k.into(),
                    c_value(rng).into(),
                    pad_value(rng).into(),
                ],
            ));
        }
    }
}

fn exec(kind: Kind, table: u32, params: Vec<Param>) -> Step {
    Step::Exec {
        kind,
        table,
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn plan(spec: &OltpSpec) -> Vec<Step> {
        plan_in(spec, AutoId::Zero)
    }

    fn plan_in(spec: &OltpSpec, auto_id: AutoId) -> Vec<Step> {
        let g = EventGen {
            spec,
            dist: KeyDist::new(spec),
            tid: 1,
            threads: 4,
            auto_id,
        };
        let mut out = Vec::new();
        g.event(&mut SmallRng::seed_from_u64(3), || 5, &mut out);
        out
    }

    fn shape(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Begin => "BEGIN".into(),
                Step::Commit => "COMMIT".into(),
                Step::Exec { kind, .. } => format!("{kind:?}"),
                Step::Text(t) => t.split(" (").next().unwrap_or("").into(),
            })
            .collect()
    }

    fn spec(test: OltpTest) -> OltpSpec {
        OltpSpec {
            test,
            ..OltpSpec::default()
        }
    }

    #[test]
    fn statement_texts_are_sysbench_texts() {
        let s = OltpSpec {
            random_points: 3,
            number_of_ranges: 2,
            ..OltpSpec::default()
        };
        let cases = [
            (Kind::PointSelect, "SELECT c FROM sbtest2 WHERE id=?"),
            (
                Kind::SimpleRange,
                "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ?",
            ),
            (
                Kind::SumRange,
                "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN ? AND ?",
            ),
            (
                Kind::OrderRange,
                "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c",
            ),
            (
                Kind::DistinctRange,
                "SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c",
            ),
            (Kind::IndexUpdate, "UPDATE sbtest2 SET k=k+1 WHERE id=?"),
            (Kind::NonIndexUpdate, "UPDATE sbtest2 SET c=? WHERE id=?"),
            (Kind::Delete, "DELETE FROM sbtest2 WHERE id=?"),
            (
                Kind::Insert,
                "INSERT INTO sbtest2 (id, k, c, pad) VALUES (?, ?, ?, ?)",
            ),
            (
                Kind::RandomPoints,
                "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)",
            ),
            (
                Kind::RandomRanges,
                "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?",
            ),
        ];
        for (k, sql) in cases {
            assert_eq!(k.sql(2, &s), sql);
        }
    }

    #[test]
    fn read_write_event_is_sysbench_order_and_counts() {
        let steps = plan(&spec(OltpTest::OltpReadWrite));
        let mut want = vec!["BEGIN".to_string()];
        want.extend(std::iter::repeat_n("PointSelect".to_string(), 10));
        for k in [
            "SimpleRange",
            "SumRange",
            "OrderRange",
            "DistinctRange",
            "IndexUpdate",
            "NonIndexUpdate",
            "Delete",
            "Insert",
            "COMMIT",
        ] {
            want.push(k.into());
        }
        assert_eq!(shape(&steps), want);
        // Delete and insert share the id, ranges span range_size ids.
        let ids: Vec<&Vec<Param>> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Exec {
                    kind: Kind::Delete | Kind::Insert,
                    params,
                    ..
                } => Some(params),
                _ => None,
            })
            .collect();
        assert_eq!(ids[0][0], ids[1][0]);
        for s in &steps {
            if let Step::Exec {
                kind: Kind::SimpleRange,
                params,
                ..
            } = s
            {
                let (Param::UInt(lo), Param::UInt(hi)) = (&params[0], &params[1]) else {
                    panic!("{params:?}")
                };
                assert_eq!(hi - lo, 99);
            }
        }
    }

    #[test]
    fn options_change_counts() {
        let s = OltpSpec {
            point_selects: 3,
            simple_ranges: 2,
            sum_ranges: 0,
            order_ranges: 0,
            distinct_ranges: 1,
            index_updates: 2,
            non_index_updates: 0,
            delete_inserts: 2,
            skip_trx: true,
            ..OltpSpec::default()
        };
        let got = shape(&plan(&s));
        let count = |k: &str| got.iter().filter(|g| *g == k).count();
        assert_eq!(count("BEGIN") + count("COMMIT"), 0);
        assert_eq!(count("PointSelect"), 3);
        assert_eq!(count("SimpleRange"), 2);
        assert_eq!(count("SumRange") + count("OrderRange"), 0);
        assert_eq!(count("DistinctRange"), 1);
        assert_eq!(count("IndexUpdate"), 2);
        assert_eq!(count("NonIndexUpdate"), 0);
        assert_eq!((count("Delete"), count("Insert")), (2, 2));
        let no_ranges = OltpSpec {
            range_selects: false,
            ..spec(OltpTest::OltpReadOnly)
        };
        assert_eq!(plan(&no_ranges).len(), 12);
        assert_eq!(kinds(&no_ranges), vec![Kind::PointSelect]);
    }

    #[test]
    fn every_test_has_its_sysbench_shape() {
        let cases: [(OltpTest, usize); 10] = [
            (OltpTest::OltpReadWrite, 20),
            (OltpTest::OltpReadOnly, 16),
            (OltpTest::OltpWriteOnly, 6),
            (OltpTest::OltpPointSelect, 1),
            (OltpTest::OltpUpdateIndex, 1),
            (OltpTest::OltpUpdateNonIndex, 1),
            (OltpTest::OltpInsert, 1),
            (OltpTest::OltpDelete, 1),
            (OltpTest::SelectRandomPoints, 1),
            (OltpTest::SelectRandomRanges, 1),
        ];
        for (t, n) in cases {
            assert_eq!(plan(&spec(t)).len(), n, "{t:?}");
        }
        let ro = shape(&plan(&spec(OltpTest::OltpReadOnly)));
        assert_eq!(ro.first().map(String::as_str), Some("BEGIN"));
        assert_eq!(ro.last().map(String::as_str), Some("COMMIT"));
    }

    #[test]
    fn insert_text_and_unique_ids() {
        let on = plan(&spec(OltpTest::OltpInsert));
        let Step::Text(q) = &on[0] else { panic!() };
        assert!(
            q.starts_with("INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, "),
            "{q}"
        );
        let off = plan(&OltpSpec {
            auto_inc: false,
            ..spec(OltpTest::OltpInsert)
        });
        let Step::Text(q) = &off[0] else { panic!() };
        assert!(q.contains("VALUES (-2147483643, "), "{q}");
        // PostgreSQL: SERIAL picks the id (sysbench's pgsql branch); without auto_inc the
        // same unique ids as on MySQL.
        let Step::Text(q) = &plan_in(&spec(OltpTest::OltpInsert), AutoId::Omitted)[0] else {
            panic!()
        };
        assert!(
            q.starts_with("INSERT INTO sbtest1 (k, c, pad) VALUES ("),
            "{q}"
        );
        let off = OltpSpec {
            auto_inc: false,
            ..spec(OltpTest::OltpInsert)
        };
        let Step::Text(q) = &plan_in(&off, AutoId::Omitted)[0] else {
            panic!()
        };
        assert!(q.contains("VALUES (-2147483643, "), "{q}");
        // Every other test's events are the dialects' same.
        for t in OltpTest::ALL {
            if t != OltpTest::OltpInsert {
                assert_eq!(
                    plan_in(&spec(t), AutoId::Omitted).len(),
                    plan(&spec(t)).len()
                );
            }
        }
    }

    #[test]
    fn random_points_stay_in_the_thread_slice() {
        let s = OltpSpec {
            rand_type: crate::workloads::oltp::spec::RandType::Uniform,
            ..spec(OltpTest::SelectRandomPoints)
        };
        for _ in 0..50 {
            let Step::Exec { params, .. } = &plan(&s)[0] else {
                panic!()
            };
            assert_eq!(params.len(), 10);
            for p in params {
                let Param::UInt(v) = p else { panic!() };
                // tid 1 of 4 over 10000 rows: [2500, 5000].
                assert!((2500..=5000).contains(v), "{v}");
            }
        }
        let Step::Exec { params, .. } = &plan(&spec(OltpTest::SelectRandomRanges))[0] else {
            panic!()
        };
        assert_eq!(params.len(), 20);
    }
}
