//! `oltp: {...}`: the native sysbench-class driver, with sysbench 1.0's option names and
//! defaults, so a matrix reads like a sysbench command line.

use serde::{Deserialize, Serialize};

use crate::input::bounds::Bounded;

/// The sysbench 1.0 OLTP test names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OltpTest {
    OltpReadWrite,
    OltpReadOnly,
    OltpWriteOnly,
    OltpPointSelect,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpInsert,
    OltpDelete,
    SelectRandomPoints,
    SelectRandomRanges,
}

impl OltpTest {
    pub const ALL: [OltpTest; 10] = [
        OltpTest::OltpReadWrite,
        OltpTest::OltpReadOnly,
        OltpTest::OltpWriteOnly,
        OltpTest::OltpPointSelect,
        OltpTest::OltpUpdateIndex,
        OltpTest::OltpUpdateNonIndex,
        OltpTest::OltpInsert,
        OltpTest::OltpDelete,
        OltpTest::SelectRandomPoints,
        OltpTest::SelectRandomRanges,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OltpTest::OltpReadWrite => "oltp_read_write",
            OltpTest::OltpReadOnly => "oltp_read_only",
            OltpTest::OltpWriteOnly => "oltp_write_only",
            OltpTest::OltpPointSelect => "oltp_point_select",
            OltpTest::OltpUpdateIndex => "oltp_update_index",
            OltpTest::OltpUpdateNonIndex => "oltp_update_non_index",
            OltpTest::OltpInsert => "oltp_insert",
            OltpTest::OltpDelete => "oltp_delete",
            OltpTest::SelectRandomPoints => "select_random_points",
            OltpTest::SelectRandomRanges => "select_random_ranges",
        }
    }

    /// Whether the event is wrapped in BEGIN/COMMIT (unless `skip_trx`).
    pub fn transactional(self) -> bool {
        matches!(
            self,
            OltpTest::OltpReadWrite | OltpTest::OltpReadOnly | OltpTest::OltpWriteOnly
        )
    }
}

/// sysbench's `--rand-type`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    /// sysbench 1.0.20's default.
    #[default]
    Special,
    Pareto,
    Zipfian,
}

/// `oltp: {...}`: sysbench 1.0 OLTP semantics in a native driver. Field names and defaults
/// are sysbench's (`sysbench oltp_read_write help`).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OltpSpec {
    #[serde(default = "default_test")]
    pub test: OltpTest,
    #[serde(default = "d_1")]
    pub tables: u32,
    #[serde(default = "d_10000")]
    pub table_size: u32,
    #[serde(default = "d_100")]
    pub range_size: u32,
    #[serde(default = "d_10")]
    pub point_selects: u32,
    #[serde(default = "d_1")]
    pub simple_ranges: u32,
    #[serde(default = "d_1")]
    pub sum_ranges: u32,
    #[serde(default = "d_1")]
    pub order_ranges: u32,
    #[serde(default = "d_1")]
    pub distinct_ranges: u32,
    /// Master switch for the four range kinds.
    #[serde(default = "d_true")]
    pub range_selects: bool,
    #[serde(default = "d_1")]
    pub index_updates: u32,
    #[serde(default = "d_1")]
    pub non_index_updates: u32,
    #[serde(default = "d_1")]
    pub delete_inserts: u32,
    #[serde(default)]
    pub skip_trx: bool,
    #[serde(default = "d_true")]
    pub auto_inc: bool,
    #[serde(default)]
    pub secondary: bool,
    #[serde(default = "d_true")]
    pub create_secondary: bool,
    /// select_random_points: values in the IN() list.
    #[serde(default = "d_10")]
    pub random_points: u32,
    /// select_random_ranges: BETWEEN ranges per statement and their width.
    #[serde(default = "d_10")]
    pub number_of_ranges: u32,
    #[serde(default = "d_5")]
    pub delta: u32,
    #[serde(default)]
    pub rand_type: RandType,
    #[serde(default = "d_12")]
    pub rand_spec_iter: u32,
    #[serde(default = "d_1")]
    pub rand_spec_pct: u32,
    #[serde(default = "d_75")]
    pub rand_spec_res: u32,
    #[serde(default = "d_pareto_h")]
    pub rand_pareto_h: f64,
    #[serde(default = "d_zipf")]
    pub rand_zipfian_exp: f64,
    /// 0 seeds from the clock, as sysbench does.
    #[serde(default)]
    pub rand_seed: u64,
    /// Storage engine of the sbtest tables (sysbench's `--mysql_storage_engine`); an
    /// `engines` axis in the matrix, when present, wins.
    #[serde(default = "d_innodb")]
    pub mysql_storage_engine: String,
    /// Schema holding the sbtest tables.
    #[serde(default = "d_db")]
    pub db: String,
    /// Connections loading the tables in parallel.
    #[serde(default = "d_4")]
    pub prepare_threads: u32,
    /// Extra latency percentiles (0-100) recorded as JSON in results.csv's `lat_percentiles`.
    #[serde(default)]
    pub percentiles: Vec<f64>,
}

impl OltpSpec {
    /// Every size with its range: tables and rows a server loads in minutes to hours,
    /// statements per event a client sends, and the key distribution's own parameters
    /// (`rand_spec_iter` draws per key, percentages).
    pub(crate) fn sizes(&self) -> [Bounded<'static>; 19] {
        let per_event = 0..=1000;
        [
            ("tables", self.tables.into(), 1..=10_000),
            ("table_size", self.table_size.into(), 1..=1_000_000_000),
            ("range_size", self.range_size.into(), 1..=1_000_000),
            (
                "point_selects",
                self.point_selects.into(),
                per_event.clone(),
            ),
            (
                "simple_ranges",
                self.simple_ranges.into(),
                per_event.clone(),
            ),
            ("sum_ranges", self.sum_ranges.into(), per_event.clone()),
            ("order_ranges", self.order_ranges.into(), per_event.clone()),
            (
                "distinct_ranges",
                self.distinct_ranges.into(),
                per_event.clone(),
            ),
            (
                "index_updates",
                self.index_updates.into(),
                per_event.clone(),
            ),
            (
                "non_index_updates",
                self.non_index_updates.into(),
                per_event.clone(),
            ),
            ("delete_inserts", self.delete_inserts.into(), per_event),
            ("random_points", self.random_points.into(), 1..=10_000),
            ("number_of_ranges", self.number_of_ranges.into(), 1..=1000),
            ("delta", self.delta.into(), 1..=1_000_000),
            ("rand_spec_iter", self.rand_spec_iter.into(), 1..=100),
            ("rand_spec_pct", self.rand_spec_pct.into(), 0..=100),
            ("rand_spec_res", self.rand_spec_res.into(), 0..=100),
            ("prepare_threads", self.prepare_threads.into(), 1..=256),
            ("percentiles", self.percentiles.len() as u64, 0..=32),
        ]
    }

    /// The key distribution's fractions, in the ranges their formulas take.
    pub(crate) fn fractions(&self) -> Result<(), (&'static str, String)> {
        let h = self.rand_pareto_h;
        let (above, below) = PARETO_H;
        if !(h > above && h < below) {
            return Err((
                "rand_pareto_h",
                format!("`rand_pareto_h` is {h}: it must be above {above} and below {below}"),
            ));
        }
        let e = self.rand_zipfian_exp;
        if !(e.is_finite() && ZIPFIAN_EXP.contains(&e)) {
            return Err((
                "rand_zipfian_exp",
                format!(
                    "`rand_zipfian_exp` is {e}: it must be from {} to {}",
                    ZIPFIAN_EXP.start(),
                    ZIPFIAN_EXP.end()
                ),
            ));
        }
        Ok(())
    }

    /// `fractions` as the schema says it.
    pub(crate) fn fraction_rules() -> [crate::workloads::SchemaRule; 2] {
        let (above, below) = PARETO_H;
        let (from, to) = (ZIPFIAN_EXP.start(), ZIPFIAN_EXP.end());
        [
            (
                "rand_pareto_h",
                serde_json::json!({"exclusiveMinimum": above, "exclusiveMaximum": below}),
            ),
            (
                "rand_zipfian_exp",
                serde_json::json!({"minimum": from, "maximum": to}),
            ),
        ]
    }
}

/// `rand_pareto_h` lies strictly between these.
const PARETO_H: (f64, f64) = (0.0, 1.0);
/// What `rand_zipfian_exp` may be.
const ZIPFIAN_EXP: std::ops::RangeInclusive<f64> = 0.0..=10.0;

impl Default for OltpSpec {
    fn default() -> Self {
        crate::input::yaml::from_str("{}").expect("invariant: every OltpSpec field has a default")
    }
}

fn default_test() -> OltpTest {
    OltpTest::OltpReadWrite
}
fn d_true() -> bool {
    true
}
fn d_1() -> u32 {
    1
}
fn d_4() -> u32 {
    4
}
fn d_5() -> u32 {
    5
}
fn d_10() -> u32 {
    10
}
fn d_12() -> u32 {
    12
}
fn d_75() -> u32 {
    75
}
fn d_100() -> u32 {
    100
}
fn d_10000() -> u32 {
    10000
}
fn d_pareto_h() -> f64 {
    0.2
}
fn d_zipf() -> f64 {
    0.8
}
fn d_innodb() -> String {
    "innodb".into()
}
fn d_db() -> String {
    "sbtest".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_sysbench_defaults() {
        let s = OltpSpec::default();
        assert_eq!(s.test, OltpTest::OltpReadWrite);
        assert_eq!((s.tables, s.table_size, s.range_size), (1, 10000, 100));
        assert_eq!(s.point_selects, 10);
        assert!(s.auto_inc && s.create_secondary && !s.secondary && !s.skip_trx);
        assert_eq!(s.rand_type, RandType::Special);
        assert_eq!(
            (s.rand_spec_iter, s.rand_spec_pct, s.rand_spec_res),
            (12, 1, 75)
        );
    }

    #[test]
    fn names_round_trip() {
        for t in OltpTest::ALL {
            let parsed: OltpTest = crate::input::yaml::from_str(t.name()).unwrap();
            assert_eq!(parsed, t);
        }
    }

    #[test]
    fn unknown_option_is_an_error() {
        let e = crate::input::yaml::from_str::<OltpSpec>("{tabels: 4}").unwrap_err();
        assert!(e.to_string().contains("tabels"), "{e}");
    }
}
