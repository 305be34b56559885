//! Bencher Metric Format JSON (`--format bmf`), for `bencher run --adapter json`:
//! `{"<benchmark>": {"<measure>": {"value": f64, "lower_value": f64, "upper_value": f64}}}`,
//! the bounds optional (bencher.dev/docs/reference/bencher-metric-format).
//!
//! A benchmark is a cell, named `<matrix> / <cell>` as `compare` names it; a measure is a
//! metric, under Bencher's built-in slugs where one fits (`throughput` in operations per
//! second, `latency` in nanoseconds) and a slug of its own elsewhere, each with its units
//! (`MEASURES`, which scripts/bencher-measures.sh creates in a project). Every latency goes to
//! nanoseconds, digits kept (`decimal::shifted`).

use anyhow::Result;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::decimal::shifted;
use super::{Exporter, RunView};
use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::input::cell_name;
use crate::compare::join::Comparison;
use crate::model::metric::{Metric, METRICS};
use crate::model::{CellKey, Dimension};

pub(crate) struct Bmf;

/// One measure of one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Measure {
    pub(crate) value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lower_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) upper_value: Option<f64>,
}

/// Benchmark name -> measure slug -> measure.
pub(crate) type Report = IndexMap<String, IndexMap<String, Measure>>;

impl Exporter for Bmf {
    fn needs_matrix(&self) -> bool {
        // Its name, which every benchmark's name starts with.
        true
    }

    /// Each cell's median over its `ok` iterations, with their minimum and maximum as the
    /// bounds: values the run stored (the median of an even count is the mean of the two
    /// middle ones).
    fn run(&self, run: &RunView) -> Result<String> {
        let matrix = run
            .matrix
            .and_then(|m| m.name.as_deref())
            .unwrap_or_default();
        let rows = run.dir.current_rows()?;
        text(&run_report(matrix, &rows))
    }

    /// The candidate's mean of each compared cell and metric, with the interval of that mean
    /// at the comparison's confidence level as the bounds.
    fn compare(&self, _: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        match comparisons {
            [c] => text(&compare_report(c)),
            _ => Err(crate::error::UsageError(format!(
                "--format bmf reports one run: give one candidate, not {} (Bencher takes \
                 each candidate as a report of its own)",
                comparisons.len()
            ))
            .into()),
        }
    }

    fn history(&self, _: &[EnvDiff], _: &History) -> Result<String> {
        Err(super::not_for_history("bmf"))
    }
}

/// The Bencher measure of a metric: its slug, the units it is created with, the decimal
/// places the stored unit moves by, and whether Bencher has it built in (`latency` and
/// `throughput` are in every project). The others scripts/bencher-measures.sh creates with
/// their units before a first upload (its list, scripts/bencher-measures.tsv, is this table:
/// a test holds them together); Bencher would otherwise make each on first sight with a
/// generic unit. `nanoseconds (ns)` and `seconds (s)` are Bencher's own words, which its
/// charts scale (µs, ms...).
struct BencherMeasure {
    metric: &'static str,
    slug: &'static str,
    // The units and the origin are for Bencher, not the JSON: the test that writes
    // scripts/bencher-measures.tsv from this table reads them.
    #[cfg_attr(not(test), allow(dead_code))]
    units: &'static str,
    places: i32,
    #[cfg_attr(not(test), allow(dead_code))]
    built_in: bool,
}

const NS: &str = "nanoseconds (ns)";
const MS_TO_NS: i32 = 6;

/// Every metric's measure, in the metrics' order.
const MEASURES: [BencherMeasure; 14] = [
    measure("qps", "throughput", "operations / second (ops/s)", 0, true),
    measure("tps", "tps", "transactions / second (trx/s)", 0, false),
    measure("seconds", "seconds", "seconds (s)", 0, false),
    measure("lat_avg_ms", "latency", NS, MS_TO_NS, true),
    measure("lat_p50_ms", "latency-p50", NS, MS_TO_NS, false),
    measure("lat_p95_ms", "latency-p95", NS, MS_TO_NS, false),
    measure("lat_p99_ms", "latency-p99", NS, MS_TO_NS, false),
    measure("lat_max_ms", "latency-max", NS, MS_TO_NS, false),
    measure("apdex", "apdex", "score (0 to 1)", 0, false),
    // Microseconds to nanoseconds, as the latencies.
    measure("srv_cpu_us_per_op", "server-cpu-ns-per-op", NS, 3, false),
    measure(
        "srv_instr_per_op",
        "server-instructions-per-op",
        "instructions / operation",
        0,
        false,
    ),
    measure("nopm", "nopm", "new-orders / minute", 0, false),
    measure("tpmc", "tpmc", "new-order transactions / minute", 0, false),
    measure("errors", "errors", "errors", 0, false),
];

const fn measure(
    metric: &'static str,
    slug: &'static str,
    units: &'static str,
    places: i32,
    built_in: bool,
) -> BencherMeasure {
    BencherMeasure {
        metric,
        slug,
        units,
        places,
        built_in,
    }
}

/// A metric's measure slug and the decimal places its stored unit moves by (a metric without
/// a measure, which the tests refuse: its name in kebab case, unmoved).
fn measure_of(metric: &Metric) -> (String, i32) {
    match MEASURES.iter().find(|m| m.metric == metric.name) {
        Some(m) => (m.slug.to_string(), m.places),
        None => (metric.name.replace('_', "-"), 0),
    }
}

fn benchmark(matrix: &str, cell: &str) -> String {
    match matrix.is_empty() {
        true => cell.to_string(),
        false => format!("{matrix} / {cell}"),
    }
}

/// A measure when every number is one JSON can carry.
fn finite(value: f64, lower: Option<f64>, upper: Option<f64>) -> Option<Measure> {
    let ok = |v: Option<f64>| v.is_none_or(f64::is_finite);
    (value.is_finite() && ok(lower) && ok(upper)).then_some(Measure {
        value,
        lower_value: lower,
        upper_value: upper,
    })
}

/// The middle of `sorted` (ascending, not empty).
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n % 2 {
        1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub(crate) fn run_report(matrix: &str, rows: &[crate::model::ResultRow]) -> Report {
    let mut cells: IndexMap<CellKey, (String, Vec<&crate::model::ResultRow>)> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok()) {
        let dims: IndexMap<String, String> = (Dimension::ALL.into_iter())
            .map(|d| (d.to_string(), r.dim(d)))
            .collect();
        (cells.entry(r.cell_key()))
            .or_insert_with(|| (cell_name(&dims), Vec::new()))
            .1
            .push(r);
    }
    let mut out = Report::new();
    for (name, rows) in cells.values() {
        let mut measures = IndexMap::new();
        for metric in METRICS {
            let (slug, places) = measure_of(metric);
            let mut values: Vec<f64> = (rows.iter())
                .filter_map(|r| metric.value(r))
                .map(|v| shifted(v, places))
                .collect();
            if values.is_empty() {
                continue;
            }
            values.sort_by(f64::total_cmp);
            let (lo, hi) = (values[0], values[values.len() - 1]);
            if let Some(m) = finite(median(&values), Some(lo), Some(hi)) {
                measures.insert(slug, m);
            }
        }
        if !measures.is_empty() {
            out.insert(benchmark(matrix, name), measures);
        }
    }
    out
}

pub(crate) fn compare_report(c: &Comparison) -> Report {
    let mut out = Report::new();
    for ch in &c.changes {
        let Some(metric) = Metric::find(&ch.metric) else {
            continue;
        };
        let (slug, places) = measure_of(metric);
        let side = &ch.candidate;
        let bound = |sign: f64| {
            side.half_width
                .map(|h| shifted(side.mean + sign * h, places))
        };
        if let Some(m) = finite(shifted(side.mean, places), bound(-1.0), bound(1.0)) {
            (out.entry(benchmark(&c.candidate.matrix, &ch.cell)))
                .or_default()
                .insert(slug, m);
        }
    }
    out
}

/// Pretty JSON whose strings carry no character a terminal acts on (as `--format json`).
fn text(report: &Report) -> Result<String> {
    Ok(crate::escape::json(&serde_json::to_string_pretty(report)?) + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::join::tests_support::{change, empty_comparison};
    use crate::compare::join::Verdict;
    use crate::model::{ResultRow, Status};

    fn row(engine: &str, iteration: u32, qps: f64, p99_ms: f64) -> ResultRow {
        ResultRow {
            server: "mariadb-10.11".into(),
            config: "binlog-on".into(),
            engine: engine.into(),
            workload: "write".into(),
            concurrency: 2,
            iteration,
            status: Status::Ok,
            qps: Some(qps),
            lat_p99_ms: Some(p99_ms),
            ..ResultRow::default()
        }
    }

    /// The published shape (bencher.dev/bmf.json): an object of benchmarks, each an object
    /// of measures, each an object with a number `value` and optional number bounds, and no
    /// other key.
    fn assert_bmf_shape(json: &str) {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let benchmarks = v.as_object().expect("an object of benchmarks");
        assert!(!benchmarks.is_empty());
        for (name, measures) in benchmarks {
            assert!(!name.is_empty() && name.chars().count() <= 1024, "{name}");
            let measures = measures.as_object().expect("an object of measures");
            for (slug, m) in measures {
                assert!(!slug.is_empty() && slug.len() <= 64, "{slug}");
                let m = m.as_object().expect("a measure object");
                assert!(m["value"].is_number(), "{json}");
                for (k, v) in m {
                    assert!(["value", "lower_value", "upper_value"].contains(&k.as_str()));
                    assert!(v.is_number(), "{k} in {json}");
                }
            }
        }
        let back: Report = serde_json::from_str(json).unwrap();
        assert_eq!(
            crate::escape::json(&serde_json::to_string_pretty(&back).unwrap()) + "\n",
            json
        );
    }

    #[test]
    fn a_run_is_each_cells_median_between_its_minimum_and_maximum() {
        let rows = [
            row("InnoDB", 1, 1000.0, 6.0),
            row("InnoDB", 2, 1012.0, 5.9289),
            row("InnoDB", 3, 990.0, 6.0606),
            row("MyISAM", 1, 2000.0, 3.0),
        ];
        let json = text(&run_report("binlog", &rows)).unwrap();
        assert_bmf_shape(&json);
        let r: Report = serde_json::from_str(&json).unwrap();
        let innodb = &r["binlog / mariadb-10.11 / binlog-on / InnoDB / write / c2"];
        assert_eq!(
            innodb["throughput"],
            Measure {
                value: 1000.0,
                lower_value: Some(990.0),
                upper_value: Some(1012.0)
            }
        );
        // Milliseconds to nanoseconds with the stored digits.
        assert_eq!(innodb["latency-p99"].value, 6_000_000.0);
        assert_eq!(innodb["latency-p99"].lower_value, Some(5_928_900.0));
        assert_eq!(r.len(), 2);
    }

    const MEASURES_FILE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bencher-measures.tsv");

    /// scripts/bencher-measures.tsv as `MEASURES` writes it: each measure's slug, the name
    /// it is created with (the metric's title; a built-in one's is Bencher's), its units, the
    /// metric and whether Bencher has it built in.
    fn measures_file() -> String {
        let mut out = String::from(
            "# The Bencher measures of `--format bmf`, from src/export/bmf.rs (`MEASURES`; a\n\
             # unit test holds this file to it). scripts/bencher-measures.sh creates the\n\
             # `create` ones. Tab-separated: slug, name, units, rmatrix metric, origin.\n",
        );
        for m in &MEASURES {
            let metric = Metric::find(m.metric).expect("a measure's metric is a metric");
            let (name, origin) = match m.built_in {
                true => (m.slug[..1].to_uppercase() + &m.slug[1..], "built-in"),
                false => (metric.title.to_string(), "create"),
            };
            out.push_str(&format!(
                "{}\t{name}\t{}\t{}\t{origin}\n",
                m.slug, m.units, m.metric
            ));
        }
        out
    }

    /// The script's list is the exporter's: every metric has a measure, each slug once, the
    /// file says the same, and a row with every metric gives exactly those measures.
    #[test]
    fn the_bencher_measures_file_is_what_the_exporter_emits() {
        let metrics: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        let measured: Vec<&str> = MEASURES.iter().map(|m| m.metric).collect();
        assert_eq!(
            measured, metrics,
            "one measure per metric, in the metrics' order"
        );
        let mut slugs: Vec<&str> = MEASURES.iter().map(|m| m.slug).collect();
        slugs.sort_unstable();
        slugs.dedup();
        assert_eq!(slugs.len(), MEASURES.len(), "slugs are unique");
        let built_in: Vec<&str> = MEASURES
            .iter()
            .filter(|m| m.built_in)
            .map(|m| m.slug)
            .collect();
        assert_eq!(
            built_in,
            ["throughput", "latency"],
            "Bencher's built-in measures"
        );

        let file = std::fs::read_to_string(MEASURES_FILE).unwrap_or_default();
        let expected = measures_file();
        assert!(
            file == expected,
            "scripts/bencher-measures.tsv is not the exporter's list; write it as:\n{expected}"
        );

        let mut every = row("InnoDB", 1, 1000.0, 6.0);
        (every.tps, every.seconds, every.lat_avg_ms) = (Some(10.0), Some(2.5), Some(1.0));
        (every.lat_p50_ms, every.lat_p95_ms, every.lat_max_ms) = (Some(1.0), Some(4.0), Some(9.0));
        (every.apdex, every.srv_cpu_us_per_op) = (Some(0.9), Some(12.5));
        (every.srv_instr_per_op, every.errors) = (Some(30000.0), Some(2));
        (every.nopm, every.tpmc) = (Some(1200.0), Some(1250.0));
        let report = run_report("m", &[every]);
        let emitted: Vec<&str> = report[0].keys().map(String::as_str).collect();
        let listed: Vec<&str> = (file.lines())
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        assert_eq!(emitted, listed);

        // docs/compare.md's table says the same.
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/compare.md");
        let docs = std::fs::read_to_string(docs).unwrap();
        for line in file.lines().filter(|l| !l.starts_with('#')) {
            let [slug, name, units, metric, _] = line.split('\t').collect::<Vec<_>>()[..] else {
                panic!("five fields: {line}");
            };
            let row = format!("| `{metric}` | `{slug}` | {name} | {units} |");
            assert!(docs.contains(&row), "docs/compare.md lacks `{row}`");
        }
    }

    #[test]
    fn a_compare_is_the_candidates_mean_with_its_interval() {
        let mut c = empty_comparison();
        c.candidate.matrix = "binlog".into();
        let mut ch = change(
            "mariadb-10.11 / \"x\"\n\u{1b}[2J / c2",
            "qps",
            Verdict::Regressed,
        );
        ch.candidate.mean = 801.5;
        ch.candidate.half_width = Some(12.25);
        c.changes.push(ch);
        let json = text(&compare_report(&c)).unwrap();
        assert_bmf_shape(&json);
        assert!(!json.contains('\u{1b}'), "{json}");
        let r: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(
            r["binlog / mariadb-10.11 / \"x\"\n\u{1b}[2J / c2"]["throughput"],
            Measure {
                value: 801.5,
                lower_value: Some(789.25),
                upper_value: Some(813.75)
            }
        );
    }
}
