//! Seed 003's load-test table: per deployment and workload, one line per load level
//! (connections, or the target rate in open loop) with throughput, latency, errors, Apdex
//! and the server's CPU, the knee of the curve and the highest load that stays within the
//! stress limits marked, each with the evidence it rests on (`stats::knee`).

use serde::Serialize;

use crate::matrix::model::LoadCurveSpec;
use crate::model::curve::{self, LevelRows};
use crate::model::ResultRow;
use crate::stats::knee::{self, LevelCheck, Limits, Outcome, Reading, Rule, Step, Verdict};
use crate::stats::Confidence;

/// One curve: a table and what it found.
#[derive(Debug, Serialize)]
pub(crate) struct LoadCurve {
    pub(crate) title: String,
    pub(crate) header: Vec<String>,
    pub(crate) align: String,
    pub(crate) rows: Vec<Vec<String>>,
    /// The load level of the knee, or why there is none, with the evidence.
    pub(crate) knee: String,
    /// The maximum sustainable load under the limits, or why there is none.
    pub(crate) max_sustainable: String,
}

/// An open-loop level that served less than this share of its target rate fell behind.
pub(crate) const BEHIND: f64 = 0.98;

/// Means over a level's successful iterations, for its table line.
#[derive(Debug, Default, Clone, Copy)]
struct Means {
    /// Connections in closed loop, the target rate in open loop.
    load: u32,
    /// Operations per second; in open loop, arrivals served per second.
    throughput: f64,
    avg_ms: Option<f64>,
    p95_ms: Option<f64>,
    p99_ms: Option<f64>,
    error_rate: f64,
    apdex: Option<f64>,
    cpu_pct: Option<f64>,
    /// Open loop: started late, in percent of the started ones; arrivals never started,
    /// in number and in percent of those scheduled.
    late_pct: Option<f64>,
    missed: Option<f64>,
    missed_pct: Option<f64>,
}

impl Means {
    /// Open loop: the server did not keep up: more than 2% of the arrivals were never
    /// started (the few in flight at the deadline do not count for more), or, where the
    /// tool does not say (sysbench), less than 98% of the target rate was served.
    fn behind(&self) -> bool {
        self.late_pct.is_some()
            && match self.missed_pct {
                Some(m) => m > (1.0 - BEHIND) * 100.0,
                None => self.throughput < BEHIND * self.load as f64,
            }
    }
}

fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().filter(|v| v.is_finite()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn means(level: &LevelRows) -> Means {
    let rows: Vec<&ResultRow> = level.ok().collect();
    let ops: f64 = rows.iter().filter_map(|r| r.queries).sum::<u64>() as f64;
    let errors: f64 = rows.iter().filter_map(|r| r.errors).sum::<u64>() as f64;
    let open = rows.iter().any(|r| r.rate.is_some());
    Means {
        load: level.load,
        throughput: match open {
            true => mean(rows.iter().map(|r| r.achieved_rate)).unwrap_or(0.0),
            false => mean(rows.iter().map(|r| r.qps)).unwrap_or(0.0),
        },
        avg_ms: mean(rows.iter().map(|r| r.lat_avg_ms)),
        p95_ms: mean(rows.iter().map(|r| r.lat_p95_ms)),
        p99_ms: mean(rows.iter().map(|r| r.lat_p99_ms)),
        error_rate: if ops + errors > 0.0 {
            errors / (ops + errors)
        } else {
            0.0
        },
        apdex: mean(rows.iter().map(|r| r.apdex)),
        // The server's CPU over the phase's wall time: 100% is one core busy.
        cpu_pct: mean(
            rows.iter()
                .map(|r| Some(r.srv_cpu_s? / r.seconds.filter(|s| *s > 0.0)? * 100.0)),
        ),
        late_pct: open
            .then(|| {
                mean(rows.iter().map(|r| {
                    let started = r.achieved_rate? * r.seconds?;
                    Some(r.late_starts? as f64 / started.max(1.0) * 100.0)
                }))
            })
            .flatten()
            .or(open.then_some(0.0)),
        missed: open
            .then(|| mean(rows.iter().map(|r| r.missed_starts.map(|m| m as f64))))
            .flatten(),
        missed_pct: open
            .then(|| {
                mean(
                    rows.iter().map(|r| {
                        Some(r.missed_starts? as f64 / r.scheduled?.max(1) as f64 * 100.0)
                    }),
                )
            })
            .flatten(),
    }
}

/// The knee and limit rules of a matrix's load curves; `can_measure`: a running sweep, which
/// may measure a level again.
pub(crate) fn rule(spec: &LoadCurveSpec, conf: Confidence, can_measure: bool) -> Rule {
    Rule {
        min_gain_pct: spec.min_gain_pct,
        max_measurements: spec.max_measurements,
        conf,
        can_measure,
    }
}

pub(crate) fn limits(spec: &LoadCurveSpec) -> Limits {
    Limits {
        p99_ms: spec.p99_limit_ms(),
        error_rate: spec.error_pct.map(|p| p / 100.0),
    }
}

/// A row's batch means of its per-second throughput, when its measurement had them.
pub(crate) type Batches<'a> = &'a dyn Fn(&ResultRow) -> Option<Vec<f64>>;

/// The curves of a run: one per server, config, engine and workload (and connections, in
/// open loop) with two or more load levels measured.
pub(crate) fn curves(
    spec: &LoadCurveSpec,
    conf: Confidence,
    rows: &[ResultRow],
    batches: Batches,
) -> Vec<LoadCurve> {
    let (rule, limits) = (rule(spec, conf, false), limits(spec));
    let has_limits = limits.p99_ms.is_some() || limits.error_rate.is_some();
    let mut out = Vec::new();
    for ((server, config, engine, workload, conns), level_rows) in curve::curves(rows) {
        if level_rows.len() < 2 {
            continue;
        }
        let open = conns.is_some();
        let unit = match open {
            true => "arrivals/s",
            false => "connections",
        };
        let levels: Vec<knee::Level> = level_rows.iter().map(|l| l.level(batches)).collect();
        let table: Vec<Means> = level_rows.iter().map(means).collect();
        let reading = knee::knee(&levels, &rule);
        let k = match reading.outcome {
            Outcome::Knee(i) => Some(i),
            _ => None,
        };
        let (checks, limit_outcome) = knee::limit(&levels, &rule, limits);
        let ms = match (has_limits, &limit_outcome) {
            (false, _) | (true, Outcome::Measure(_) | Outcome::Broken(0)) => None,
            (true, Outcome::Broken(i)) => Some(i - 1),
            (true, _) => levels.len().checked_sub(1),
        };
        let table_rows = table
            .iter()
            .enumerate()
            .map(|(i, l)| table_row(l, open, k == Some(i), ms == Some(i)))
            .collect();
        let mut parts = vec![server.clone(), config.clone()];
        if !engine.is_empty() {
            parts.push(engine.clone());
        }
        parts.push(workload.clone());
        if let Some(c) = conns {
            parts.push(format!("{c} connections"));
        }
        let mut header = match open {
            true => vec!["target /s", "achieved /s", "late %", "missed"],
            false => vec!["connections", "throughput /s"],
        };
        header.extend([
            "avg ms",
            "p95 ms",
            "p99 ms",
            "errors %",
            "Apdex",
            "server CPU %",
            "mark",
        ]);
        let load = |i: usize| table[i].load;
        out.push(LoadCurve {
            title: crate::escape::md_text(&parts.join(" / ")),
            align: format!("|{}---|", "---:|".repeat(header.len() - 1)),
            header: header.into_iter().map(String::from).collect(),
            rows: table_rows,
            knee: knee_text(&reading, &load, unit, spec.min_gain_pct),
            max_sustainable: match has_limits {
                false => String::new(),
                true => limit_text(&checks, &limit_outcome, &load, unit, spec),
            },
        });
    }
    out
}

fn table_row(l: &Means, open: bool, knee: bool, max_sustainable: bool) -> Vec<String> {
    let ms3 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "n/a".into());
    let mut marks = Vec::new();
    if knee {
        marks.push("knee");
    }
    if max_sustainable {
        marks.push("max sustainable");
    }
    if l.behind() {
        marks.push("behind the target");
    }
    let mut cells = vec![l.load.to_string(), format!("{:.0}", l.throughput)];
    if open {
        cells.push(format!("{:.1}", l.late_pct.unwrap_or(0.0)));
        cells.push(
            l.missed
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "n/a".into()),
        );
    }
    cells.extend([
        ms3(l.avg_ms),
        ms3(l.p95_ms),
        ms3(l.p99_ms),
        format!("{:.2}", l.error_rate * 100.0),
        l.apdex
            .map(|a| format!("{a:.2}"))
            .unwrap_or_else(|| "n/a".into()),
        l.cpu_pct
            .map(|c| format!("{c:.0}"))
            .unwrap_or_else(|| "n/a".into()),
        marks.join(", "),
    ]);
    cells.iter().map(|c| crate::escape::md_cell(c)).collect()
}

/// `+1.4% [-0.6%, +3.4%] over 2 and 2 measurements`, or why there is no interval.
fn gain_text(s: &Step) -> String {
    let n = match (s.n_from == s.n_to, s.n_from) {
        (true, 1) => "1 measurement each".to_string(),
        (true, n) => format!("{n} measurements each"),
        (false, _) => format!("{} and {} measurements", s.n_from, s.n_to),
    };
    match &s.gain {
        Some(g) => format!("{} over {n}", g.text()),
        None => format!("no interval from {n}"),
    }
}

/// The knee with its evidence, and every step the sweep could not tell.
fn knee_text(r: &Reading, load: &dyn Fn(usize) -> u32, unit: &str, min_gain: f64) -> String {
    let noisy: Vec<String> = r
        .steps
        .iter()
        .filter(|s| s.verdict == Verdict::TooNoisy)
        .map(|s| format!("{} -> {} ({})", load(s.from), load(s.to), gain_text(s)))
        .collect();
    let noisy = match noisy.is_empty() {
        true => String::new(),
        false => format!(
            "; too noisy to tell, so the sweep went on past: {}",
            noisy.join(", ")
        ),
    };
    let last = r.steps.last();
    let head = match (&r.outcome, last) {
        (Outcome::Knee(i), Some(s)) if s.to > s.from + 1 => format!(
            "The knee is at {} {unit}: the levels after it, up to {} {unit}, taken together \
             (each step alone too noisy to tell) gained {}, below {min_gain}%, while p99 rose",
            load(*i),
            load(s.to),
            gain_text(s)
        ),
        (Outcome::Knee(i), Some(s)) => format!(
            "The knee is at {} {unit}: the next level gained {}, below {min_gain}%, while p99 rose",
            load(*i),
            gain_text(s)
        ),
        (Outcome::Measure(_), Some(s)) => format!(
            "No knee decided: {} -> {} {unit} needs more measurements ({})",
            load(s.from),
            load(s.to),
            gain_text(s)
        ),
        _ => format!(
            "No knee: throughput rose by more than {min_gain}% at every step it could tell (or p99 did not rise)"
        ),
    };
    head + &noisy
}

/// The maximum sustainable load with the level that broke a limit and its evidence.
fn limit_text(
    checks: &[LevelCheck],
    outcome: &Outcome,
    load: &dyn Fn(usize) -> u32,
    unit: &str,
    spec: &LoadCurveSpec,
) -> String {
    let limits = spec.limits_text();
    let evidence = |c: &LevelCheck| {
        let interval = c
            .p99_interval
            .map(|(lo, hi)| format!(" [{lo:.3}, {hi:.3}]"))
            .unwrap_or_default();
        let by_mean = match c.by_mean {
            true => ", too noisy to tell: the mean decided",
            false => "",
        };
        format!(
            "p99 {:.3} ms{interval}, errors {:.2}% over {} measurement(s){by_mean}",
            c.p99_ms,
            c.error_rate * 100.0,
            c.n
        )
    };
    match outcome {
        Outcome::Broken(0) => format!(
            "no level stays within the limits ({limits}): {} {unit} broke them ({})",
            load(0),
            evidence(&checks[0])
        ),
        Outcome::Broken(i) => format!(
            "maximum sustainable load under the limits ({limits}): {} {unit} ({} {unit} broke them: {})",
            load(i - 1),
            load(*i),
            checks.last().map(evidence).unwrap_or_default()
        ),
        Outcome::Measure(_) => format!(
            "maximum sustainable load under the limits ({limits}): not decided, a level needs more measurements"
        ),
        Outcome::GoOn | Outcome::Knee(_) => match checks.last() {
            Some(c) => format!(
                "maximum sustainable load under the limits ({limits}): {} {unit} (every level held; the last: {})",
                load(c.level),
                evidence(c)
            ),
            None => format!("no level measured against the limits ({limits})"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    fn row(c: u32, iteration: u32, qps: f64, p99: f64, errors: u64) -> ResultRow {
        ResultRow {
            server: "db".into(),
            config: "on".into(),
            workload: "ps".into(),
            concurrency: c,
            iteration,
            status: Status::Ok,
            queries: Some((qps * 10.0) as u64),
            errors: Some(errors),
            seconds: Some(10.0),
            qps: Some(qps),
            lat_avg_ms: Some(p99 / 2.0),
            lat_p95_ms: Some(p99 * 0.9),
            lat_p99_ms: Some(p99),
            srv_cpu_s: Some(5.0),
            ..ResultRow::default()
        }
    }

    fn no_batches(_: &ResultRow) -> Option<Vec<f64>> {
        None
    }

    fn spec() -> LoadCurveSpec {
        LoadCurveSpec {
            min_gain_pct: 5.0,
            p99: Some(crate::input::Length::parse("5ms").unwrap()),
            error_pct: Some(1.0),
            max_measurements: 4,
        }
    }

    #[test]
    fn marks_the_knee_and_the_maximum_sustainable_load_with_their_evidence() {
        let mut rows = vec![
            row(1, 1, 100.0, 1.0, 0),
            row(1, 2, 101.0, 1.0, 0),
            row(2, 1, 195.0, 1.1, 0),
            row(2, 2, 197.0, 1.1, 0),
            row(4, 1, 370.0, 1.4, 0),
            row(4, 2, 374.0, 1.6, 0),
            row(8, 1, 372.0, 9.0, 39),
            row(8, 2, 376.0, 9.5, 39),
            row(16, 1, 1.0, 1.0, 0),
        ];
        rows[8].status = Status::Failed; // a failed level is not on the curve
        let c = curves(&spec(), Confidence::default(), &rows, &no_batches);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!(c.title, "db / on / ps");
        let loads: Vec<&str> = c.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(loads, ["1", "2", "4", "8"]);
        // Level 4: the mean of its two iterations; knee and max sustainable both there.
        assert_eq!(c.rows[2][1], "372");
        assert_eq!(c.rows[2][4], "1.500");
        assert_eq!(c.rows[2][8], "knee, max sustainable");
        // 78 errors of 7558 operations; server CPU 5 s in 10 s = 50% of a core.
        assert_eq!(c.rows[3][5], "1.03");
        assert_eq!(c.rows[3][7], "50");
        assert!(
            c.knee
                .starts_with("The knee is at 4 connections: the next level gained +0.5% ["),
            "{}",
            c.knee
        );
        assert!(
            c.knee
                .contains("over 2 measurements each, below 5%, while p99 rose"),
            "{}",
            c.knee
        );
        assert!(
            c.max_sustainable.starts_with(
                "maximum sustainable load under the limits (p99 <= 5 ms, errors <= 1%): 4 connections (8 connections broke them: p99 9.000 ms, errors 1.04% over 1 measurement(s))"
            ),
            "{}",
            c.max_sustainable
        );
    }

    #[test]
    fn a_step_too_noisy_to_tell_is_named() {
        let rows = vec![
            row(1, 1, 100.0, 1.0, 0),
            row(1, 2, 140.0, 1.0, 0),
            row(2, 1, 110.0, 1.2, 0),
            row(2, 2, 150.0, 1.2, 0),
        ];
        let spec = LoadCurveSpec {
            max_measurements: 2,
            ..spec()
        };
        let c = curves(&spec, Confidence::default(), &rows, &no_batches);
        assert!(c[0].knee.starts_with("No knee"), "{}", c[0].knee);
        assert!(
            c[0].knee
                .contains("too noisy to tell, so the sweep went on past: 1 -> 2 (+"),
            "{}",
            c[0].knee
        );
        // Measured once per level by a run that did not ask for more: nothing can be told.
        let once = curves(
            &spec,
            Confidence::default(),
            &rows[..1]
                .iter()
                .chain(&rows[2..3])
                .cloned()
                .collect::<Vec<_>>(),
            &no_batches,
        );
        assert!(
            once[0]
                .knee
                .ends_with("went on past: 1 -> 2 (no interval from 1 measurement each)"),
            "{}",
            once[0].knee
        );
    }

    #[test]
    fn open_loop_levels_are_rates_and_a_level_that_fell_behind_is_marked() {
        let open = |rate: u32, it: u32, achieved: f64, missed: u64, p99: f64| ResultRow {
            rate: Some(rate),
            achieved_rate: Some(achieved),
            scheduled: Some(rate as u64 * 10),
            late_starts: Some(0),
            missed_starts: Some(missed),
            ..row(8, it, achieved, p99, 0)
        };
        let rows = vec![
            open(1000, 1, 1000.0, 0, 1.0),
            open(1000, 2, 1001.0, 0, 1.0),
            open(2000, 1, 1990.0, 3, 1.2),
            open(2000, 2, 1992.0, 3, 1.2),
            open(4000, 1, 2500.0, 15000, 900.0),
            open(4000, 2, 2510.0, 15000, 900.0),
        ];
        let c = curves(
            &LoadCurveSpec::default(),
            Confidence::default(),
            &rows,
            &no_batches,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "db / on / ps / 8 connections");
        assert_eq!(
            c[0].header[..4],
            ["target /s", "achieved /s", "late %", "missed"]
        );
        let marks: Vec<&str> = c[0].rows.iter().map(|r| r[10].as_str()).collect();
        // 3 of 20,000 missed is the deadline's in-flight few, not falling behind.
        assert_eq!(marks, ["", "", "behind the target"]);
        // 1990 -> 2500 still gained 26%: no knee yet, whatever p99 did.
        assert!(c[0].knee.starts_with("No knee"), "{}", c[0].knee);
        let flat: Vec<ResultRow> = rows
            .iter()
            .map(|r| match r.rate {
                Some(4000) => ResultRow {
                    achieved_rate: Some(2000.0 + r.iteration as f64),
                    ..r.clone()
                },
                _ => r.clone(),
            })
            .collect();
        let c = curves(
            &LoadCurveSpec::default(),
            Confidence::default(),
            &flat,
            &no_batches,
        );
        assert!(c[0].knee.contains("at 2000 arrivals/s"), "{}", c[0].knee);
    }

    #[test]
    fn a_curve_needs_two_levels_and_limits_are_optional() {
        let spec = LoadCurveSpec {
            p99: None,
            error_pct: None,
            ..spec()
        };
        let conf = Confidence::default();
        assert!(curves(&spec, conf, &[row(1, 1, 100.0, 1.0, 0)], &no_batches).is_empty());
        let rows = [
            row(1, 1, 100.0, 1.0, 0),
            row(1, 2, 101.0, 1.0, 0),
            row(2, 1, 200.0, 1.0, 0),
            row(2, 2, 202.0, 1.0, 0),
        ];
        let c = curves(&spec, conf, &rows, &no_batches);
        assert!(c[0].knee.starts_with("No knee"), "{}", c[0].knee);
        assert_eq!(c[0].max_sustainable, "");
    }
}
