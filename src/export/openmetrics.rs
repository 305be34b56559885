//! OpenMetrics text (`--format openmetrics`), for Prometheus (node_exporter's textfile
//! collector, a Pushgateway) and anything else that reads the exposition format.
//!
//! Every family is a gauge: a run's numbers are measurements, not counters that grow. Names
//! follow Prometheus' rules: an `rmatrix_` prefix, snake case, base units (milliseconds
//! become seconds, percent a ratio, digits kept by `decimal::shifted`), no `_total`. A cell's
//! dimensions are labels, their values escaped by `escape::metric_label`. Only `# HELP`,
//! `# TYPE`, gauge samples and the closing `# EOF` are written, which makes the text valid
//! OpenMetrics and valid Prometheus text at once (`promtool check metrics` reads the latter
//! and takes `# EOF` for a comment).

use std::fmt::Write as _;

use anyhow::Result;

use super::decimal::shifted;
use super::{Exporter, RunView};
use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::join::{Comparison, MetricChange, Verdict};
use crate::model::{Dimension, ResultRow};

pub(crate) struct OpenMetrics;

impl Exporter for OpenMetrics {
    fn needs_matrix(&self) -> bool {
        // The stored rows as they are.
        false
    }

    /// One sample per stored iteration (its `ok` row, or its last failed attempt), labelled
    /// with the cell and the iteration: what the run stored, no median of ours.
    fn run(&self, run: &RunView) -> Result<String> {
        let rows = run.dir.current_rows()?;
        let manifest =
            crate::results::check::read_manifest(&run.dir.file(crate::results::rundir::MANIFEST))?
                .unwrap_or_default();
        let text = |k: &str| manifest[k].as_str().unwrap_or_default().to_string();
        let about = About {
            run_id: text("run_id"),
            matrix: matrix_name(run.dir),
            started_at: text("started_at"),
        };
        Ok(run_text(&about, &rows, run.series))
    }

    fn compare(&self, _: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        Ok(compare_text(comparisons))
    }

    fn history(&self, _: &[EnvDiff], _: &History) -> Result<String> {
        Err(super::not_for_history("openmetrics"))
    }
}

/// The run a file's samples come from.
pub(crate) struct About {
    pub(crate) run_id: String,
    /// The matrix's `name:` (empty when its copy cannot be read).
    pub(crate) matrix: String,
    /// manifest.json's `started_at` (RFC 3339).
    pub(crate) started_at: String,
}

/// The `name:` of the run's copy of its matrix, read as any stored file is (bounded).
fn matrix_name(dir: &crate::results::rundir::RunDir) -> String {
    let copy = dir.file(crate::results::rundir::MATRIX_COPY);
    crate::input::file::read_text(&copy, crate::input::file::MATRIX_COPY)
        .ok()
        .and_then(|t| crate::input::yaml::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m["name"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A stored column as a gauge: name, help, the value in base units.
struct Column {
    name: &'static str,
    help: &'static str,
    value: fn(&ResultRow) -> Option<f64>,
}

const MS: i32 = -3;
const US: i32 = -6;

/// The run's columns, each a family. Latencies are stored in ms, server CPU per operation in us.
const COLUMNS: &[Column] = &[
    Column {
        name: "rmatrix_queries_per_second",
        help: "Statements completed per second of the measured phase (results.csv qps).",
        value: |r| r.qps,
    },
    Column {
        name: "rmatrix_transactions_per_second",
        help: "Committed transactions per second (tps).",
        value: |r| r.tps,
    },
    Column {
        name: "rmatrix_measured_seconds",
        help: "Wall time of the measured phase (seconds).",
        value: |r| r.seconds,
    },
    Column {
        name: "rmatrix_queries",
        help: "Statements completed without error in the measured phase (queries).",
        value: |r| r.queries.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_query_errors",
        help: "Statements that returned an error in the measured phase (errors).",
        value: |r| r.errors.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_latency_avg_seconds",
        help: "Average latency (lat_avg_ms).",
        value: |r| r.lat_avg_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_min_seconds",
        help: "Minimum latency (lat_min_ms).",
        value: |r| r.lat_min_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_p50_seconds",
        help: "Median latency (lat_p50_ms).",
        value: |r| r.lat_p50_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_p95_seconds",
        help: "95th percentile latency (lat_p95_ms).",
        value: |r| r.lat_p95_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_p99_seconds",
        help: "99th percentile latency (lat_p99_ms).",
        value: |r| r.lat_p99_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_p999_seconds",
        help: "99.9th percentile latency (lat_p999_ms).",
        value: |r| r.lat_p999_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_latency_max_seconds",
        help: "Maximum latency (lat_max_ms).",
        value: |r| r.lat_max_ms.map(|v| shifted(v, MS)),
    },
    Column {
        name: "rmatrix_apdex",
        help: "Apdex score of the iteration's operations, 0 to 1 (apdex).",
        value: |r| r.apdex,
    },
    Column {
        name: "rmatrix_commits",
        help: "Transactions committed in the measured phase (commits).",
        value: |r| r.commits.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_reconnects",
        help: "Connections re-established after a lost connection (reconnects).",
        value: |r| r.reconnects.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_client_cpu_seconds",
        help: "CPU time the rmatrix client used in the measured phase (client_cpu_s).",
        value: |r| r.client_cpu_s,
    },
    Column {
        name: "rmatrix_server_cpu_seconds",
        help: "CPU time the server container used in the measured phase (srv_cpu_s).",
        value: |r| r.srv_cpu_s,
    },
    Column {
        name: "rmatrix_server_cpu_seconds_per_operation",
        help: "Server CPU time per successful operation (srv_cpu_us_per_op).",
        value: |r| r.srv_cpu_us_per_op.map(|v| shifted(v, US)),
    },
    Column {
        name: "rmatrix_server_instructions",
        help: "Instructions the server executed in the measured phase, counted (srv_instructions).",
        value: |r| r.srv_instructions.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_server_instructions_per_operation",
        help:
            "Server instructions per successful operation, timer work set apart (srv_instr_per_op).",
        value: |r| r.srv_instr_per_op,
    },
    Column {
        name: "rmatrix_new_orders_per_minute",
        help: "TPC-C: New-Orders committed per minute, from the schema (nopm, HammerDB's NOPM).",
        value: |r| r.nopm,
    },
    Column {
        name: "rmatrix_new_order_transactions_per_minute",
        help: "TPC-C: New-Order transactions ended per minute, as the client counted (tpmc).",
        value: |r| r.tpmc,
    },
    Column {
        name: "rmatrix_server_transactions_per_minute",
        help: "TPC-C: transactions the server counted per minute (tpm, HammerDB's TPM).",
        value: |r| r.tpm,
    },
    Column {
        name: "rmatrix_server_read_bytes",
        help: "Bytes the server container read from block devices (srv_read_bytes).",
        value: |r| r.srv_read_bytes.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_server_written_bytes",
        help: "Bytes the server container wrote to block devices (srv_write_bytes).",
        value: |r| r.srv_write_bytes.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_achieved_operations_per_second",
        help: "Open loop: operations completed per second against the target rate (achieved_rate).",
        value: |r| r.achieved_rate,
    },
    Column {
        name: "rmatrix_late_starts",
        help:
            "Open loop: arrivals started more than 1 ms after their intended start (late_starts).",
        value: |r| r.late_starts.map(|v| v as f64),
    },
    Column {
        name: "rmatrix_missed_starts",
        help: "Open loop: arrivals due but never started when the phase ended (missed_starts).",
        value: |r| r.missed_starts.map(|v| v as f64),
    },
];

type Labels = Vec<(&'static str, String)>;

/// One gauge family in the making.
struct Family {
    name: &'static str,
    help: &'static str,
    /// Labels, value, and the sample's time in seconds since the epoch (`--timestamps`).
    samples: Vec<(Labels, f64, Option<f64>)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }
}

/// The unit a family's name ends in, for its `# UNIT` line (OpenMetrics wants the name to
/// end in the unit it declares).
fn unit_of(name: &str) -> Option<&'static str> {
    ["seconds", "ratio", "bytes"]
        .into_iter()
        .find(|u| name.ends_with(&format!("_{u}")))
}

/// The families in order, each with its `# HELP`, `# TYPE` and `# UNIT` once, then `# EOF`.
/// A family without a sample is left out.
fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} gauge", f.name);
        if let Some(unit) = unit_of(f.name) {
            let _ = writeln!(out, "# UNIT {} {unit}", f.name);
        }
        for (labels, value, at) in &f.samples {
            out.push_str(f.name);
            if !labels.is_empty() {
                let pairs: Vec<String> = (labels.iter())
                    .map(|(k, v)| format!("{k}=\"{}\"", crate::escape::metric_label(v)))
                    .collect();
                let _ = write!(out, "{{{}}}", pairs.join(","));
            }
            let _ = write!(out, " {}", number(*value));
            match at {
                Some(t) => {
                    let _ = writeln!(out, " {t}");
                }
                None => out.push('\n'),
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A sample value as both formats write it (`+Inf`, not Rust's `inf`).
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".into(),
        v if v == f64::INFINITY => "+Inf".into(),
        v if v == f64::NEG_INFINITY => "-Inf".into(),
        v => v.to_string(),
    }
}

/// A row's cell as labels: its non-empty dimensions, in column order.
fn cell_labels(row: &ResultRow) -> Labels {
    (Dimension::ALL.into_iter())
        .map(|d| (d.name(), row.dim(d)))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// Seconds since the epoch of an RFC 3339 time.
fn epoch(time: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|t| t.timestamp() as f64)
}

/// `rmatrix report DIR --format openmetrics` of these rows.
pub(crate) fn run_text(about: &About, rows: &[ResultRow], series: super::Series) -> String {
    let mut families: Vec<Family> = COLUMNS
        .iter()
        .map(|c| Family::new(c.name, c.help))
        .collect();
    let mut ok = Family::new(
        "rmatrix_iteration_succeeded",
        "1 when the iteration measured, 0 when it failed (status).",
    );
    let run_labels: Labels = match series.run_labels {
        true => vec![
            ("run_id", about.run_id.clone()),
            ("matrix", about.matrix.clone()),
        ],
        false => Vec::new(),
    };
    let started = epoch(&about.started_at);
    // An iteration's samples at its start; one whose start is unreadable at the run's.
    let at = |row: &ResultRow| match series.timestamps {
        true => epoch(&row.started_at).or(started),
        false => None,
    };
    for row in rows {
        let mut labels = run_labels.clone();
        labels.extend(cell_labels(row));
        labels.push(("iteration", row.iteration.to_string()));
        let ok_value = if row.is_ok() { 1.0 } else { 0.0 };
        ok.samples.push((labels.clone(), ok_value, at(row)));
        if !row.is_ok() {
            continue;
        }
        for (c, f) in COLUMNS.iter().zip(&mut families) {
            if let Some(v) = (c.value)(row) {
                f.samples.push((labels.clone(), v, at(row)));
            }
        }
    }
    let mut start = Family::new(
        "rmatrix_run_started_timestamp_seconds",
        "When the run started, in seconds since the Unix epoch (manifest.json started_at).",
    );
    if let Some(t) = started {
        let mut labels = vec![("run_id", about.run_id.clone())];
        if series.run_labels {
            labels.push(("matrix", about.matrix.clone()));
        }
        start
            .samples
            .push((labels, t, series.timestamps.then_some(t)));
    }
    families.insert(0, ok);
    families.insert(0, start);
    render(&families)
}

/// The labels of one change: the two runs, the metric, the cell.
fn change_labels(c: &Comparison, ch: &MetricChange) -> Labels {
    let mut labels: Labels = vec![
        ("baseline", c.baseline.run_id.clone()),
        ("candidate", c.candidate.run_id.clone()),
        ("metric", ch.metric.clone()),
    ];
    for d in Dimension::ALL {
        if let Some(v) = ch.dims.get(d.name()).filter(|v| !v.is_empty()) {
            labels.push((d.name(), v.clone()));
        }
    }
    labels
}

const VERDICTS: [(Verdict, &str); 5] = [
    (Verdict::Regressed, "regressed"),
    (Verdict::Improved, "improved"),
    (Verdict::Small, "small"),
    (Verdict::Unchanged, "unchanged"),
    (Verdict::CannotTell, "cannot_tell"),
];

/// `rmatrix compare ... --format openmetrics`: each change, its interval, p-value and
/// verdict (a state set: 1 for the verdict it has, 0 for the others), per cell and metric.
pub(crate) fn compare_text(comparisons: &[Comparison]) -> String {
    let mut change = Family::new(
        "rmatrix_compare_change_ratio",
        "The candidate's change against the baseline, as a ratio (change_pct / 100).",
    );
    let mut low = Family::new(
        "rmatrix_compare_change_low_ratio",
        "Lower bound of the change's interval at the confidence level, as a ratio.",
    );
    let mut high = Family::new(
        "rmatrix_compare_change_high_ratio",
        "Upper bound of the change's interval at the confidence level, as a ratio.",
    );
    let mut p = Family::new(
        "rmatrix_compare_p_value",
        "Two-sided p-value of the change.",
    );
    let mut verdict = Family::new(
        "rmatrix_compare_verdict",
        "1 for the change's verdict, 0 for the other verdicts.",
    );
    let mut threshold = Family::new(
        "rmatrix_compare_threshold_ratio",
        "Smallest change that counts, as a ratio of the baseline mean.",
    );
    let mut confidence = Family::new(
        "rmatrix_compare_confidence_ratio",
        "Confidence level of every interval.",
    );
    for c in comparisons {
        let runs: Labels = vec![
            ("baseline", c.baseline.run_id.clone()),
            ("candidate", c.candidate.run_id.clone()),
        ];
        threshold
            .samples
            .push((runs.clone(), shifted(c.threshold_pct, -2), None));
        confidence.samples.push((runs, c.confidence, None));
        for ch in &c.changes {
            let labels = change_labels(c, ch);
            let pct = |v: Option<f64>| v.map(|v| shifted(v, -2));
            for (family, value) in [
                (&mut change, pct(ch.change_pct)),
                (&mut low, pct(ch.ci_low_pct)),
                (&mut high, pct(ch.ci_high_pct)),
                (&mut p, ch.p_value),
            ] {
                if let Some(v) = value {
                    family.samples.push((labels.clone(), v, None));
                }
            }
            for (v, name) in VERDICTS {
                let mut l = labels.clone();
                l.push(("verdict", name.to_string()));
                let state = if ch.verdict == v { 1.0 } else { 0.0 };
                verdict.samples.push((l, state, None));
            }
        }
    }
    render(&[change, low, high, p, verdict, threshold, confidence])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Series;

    /// `promtool check metrics` on `text`: its complaints, or none.
    pub(crate) fn promtool(text: &str) -> Result<(), String> {
        use std::io::Write as _;
        use std::process::{Command, Stdio};
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool (Debian's prometheus package; scripts/setup.sh installs it)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write to promtool");
        let out = child.wait_with_output().expect("promtool ran");
        match out.status.success() {
            true => Ok(()),
            false => Err(format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    }

    fn about(run_id: &str) -> About {
        About {
            run_id: run_id.into(),
            matrix: "binlog".into(),
            started_at: "2026-11-29T20:48:59Z".into(),
        }
    }

    /// A file of samples stamped with their iterations' starts backfills Prometheus: promtool
    /// makes a block of it, and the block holds the sample at its time. Without the run's
    /// labels a cell is one series across runs.
    #[test]
    fn stamped_samples_backfill_prometheus_and_run_labels_can_go() {
        let rows = [row("mariadb-10.11", 1, true), row("mariadb-10.11", 2, true)];
        let series = Series {
            run_labels: false,
            timestamps: true,
        };
        let text = run_text(&about("binlog-1"), &rows, series);
        let cell = r#"server="mariadb-10.11",config="binlog-on",engine="InnoDB",workload="write",concurrency="2""#;
        let line = format!(
            "rmatrix_queries_per_second{{{cell},iteration=\"2\"}} 13114.189629241138 1795985352"
        );
        assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        assert!(!text.contains("matrix=\"binlog\""), "{text}");
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("run.om");
        std::fs::write(&file, &text).unwrap();
        let blocks = tmp.path().join("data");
        let made = std::process::Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&file)
            .arg(&blocks)
            .output()
            .expect("promtool (Debian's prometheus package)");
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        // promtool reads a data folder as Prometheus leaves one: with a write-ahead log.
        std::fs::create_dir_all(blocks.join("wal")).unwrap();
        let dump = std::process::Command::new("promtool")
            .args(["tsdb", "dump"])
            .arg(&blocks)
            .output()
            .unwrap();
        let dumped = String::from_utf8_lossy(&dump.stdout);
        // promtool dumps a sample as `{labels} value time-in-ms`.
        assert!(
            dumped
                .lines()
                .any(|l| l.contains("rmatrix_queries_per_second")
                    && l.contains("iteration=\"2\"")
                    && l.ends_with(" 13114.189629241138 1795985352000")),
            "{dumped}"
        );
    }

    fn row(server: &str, iteration: u32, ok: bool) -> ResultRow {
        ResultRow {
            server: server.into(),
            config: "binlog-on".into(),
            engine: "InnoDB".into(),
            workload: "write".into(),
            concurrency: 2,
            iteration,
            status: if ok {
                crate::model::Status::Ok
            } else {
                crate::model::Status::Failed
            },
            qps: ok.then_some(13114.189629241138),
            lat_p99_ms: ok.then_some(0.263),
            errors: ok.then_some(0),
            started_at: format!("2026-11-29T20:49:1{iteration}Z"),
            ..ResultRow::default()
        }
    }

    #[test]
    fn a_run_is_one_gauge_per_column_with_the_cell_as_labels() {
        let rows = [
            row("mariadb-10.11", 1, true),
            row("mariadb-10.11", 2, false),
        ];
        let text = run_text(&about("binlog-1"), &rows, Series::default());
        let cell = r#"run_id="binlog-1",matrix="binlog",server="mariadb-10.11",config="binlog-on",engine="InnoDB",workload="write",concurrency="2""#;
        for line in [
            "# TYPE rmatrix_queries_per_second gauge".to_string(),
            "# UNIT rmatrix_latency_p99_seconds seconds".into(),
            format!("rmatrix_queries_per_second{{{cell},iteration=\"1\"}} 13114.189629241138"),
            format!("rmatrix_latency_p99_seconds{{{cell},iteration=\"1\"}} 0.000263"),
            format!("rmatrix_iteration_succeeded{{{cell},iteration=\"2\"}} 0"),
            "rmatrix_run_started_timestamp_seconds{run_id=\"binlog-1\",matrix=\"binlog\"} 1795985339"
                .into(),
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
        // The failed iteration has no measured values; each family is declared once.
        assert!(!text.contains("iteration=\"2\"} 13114"), "{text}");
        assert_eq!(
            text.matches("# TYPE rmatrix_queries_per_second ").count(),
            1
        );
        assert!(text.ends_with("\n# EOF\n"), "{text}");
        promtool(&text).unwrap();
    }

    #[test]
    fn hostile_label_values_stay_inside_their_quotes_and_pass_promtool() {
        let hostile = "a\"b\\c\nd}e,x=\"y\u{1b}[2J\u{202e}";
        let rows = [row(hostile, 1, true)];
        let mut hostile_run = about("run\"\n}");
        hostile_run.started_at = "not a time".into();
        let text = run_text(&hostile_run, &rows, Series::default());
        let expected = r#"server="a\"b\\c\nd}e,x=\"y\\u{1b}[2J\\u{202e}""#;
        assert!(text.contains(expected), "{text}");
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
        // Each sample is one line: the newline in the name is the two characters `\n`.
        assert!(text
            .lines()
            .all(|l| l.starts_with("rmatrix_") || l.starts_with('#')));
        promtool(&text).unwrap();
    }
}
