//! Seed 003's load-test table: per deployment and workload, one line per load level
//! (connections, or the target rate in open loop) with throughput, latency, errors, Apdex
//! and the server's CPU, the knee of the curve and the highest load that stays within the
//! stress limits marked; and the rule that stops a sweep there (`load.until`).

use indexmap::IndexMap;
use serde::Serialize;

use crate::matrix::model::LoadCurveSpec;
use crate::matrix::pacing::Until;
use crate::model::ResultRow;
use crate::stats::knee::{knee, max_sustainable, Limits, LoadPoint};

/// One curve: a table and what it found.
#[derive(Debug, Serialize)]
pub struct LoadCurve {
    pub title: String,
    pub header: Vec<String>,
    pub align: String,
    pub rows: Vec<Vec<String>>,
    /// The load level of the knee, or why there is none.
    pub knee: String,
    /// The maximum sustainable load under the limits, or why there is none.
    pub max_sustainable: String,
}

/// An open-loop level that served less than this share of its target rate fell behind.
pub const BEHIND: f64 = 0.98;

/// Means over a level's successful iterations.
#[derive(Debug, Default, Clone, Copy)]
struct Level {
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

impl Level {
    fn point(&self) -> LoadPoint {
        LoadPoint {
            load: self.load as f64,
            throughput: self.throughput,
            p99_ms: self.p99_ms.unwrap_or(f64::INFINITY),
            error_rate: self.error_rate,
        }
    }

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

/// The level a row measured: its rate in open loop, else its connections.
fn load_of(r: &ResultRow) -> u32 {
    r.rate.unwrap_or(r.concurrency)
}

fn level(load: u32, rows: &[&ResultRow]) -> Level {
    let ops: f64 = rows.iter().filter_map(|r| r.queries).sum::<u64>() as f64;
    let errors: f64 = rows.iter().filter_map(|r| r.errors).sum::<u64>() as f64;
    let open = rows.iter().any(|r| r.rate.is_some());
    Level {
        load,
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

/// A curve's identity: deployment, engine, workload and, in open loop, the connections.
pub type CurveKey = (String, String, String, String, Option<u32>);

fn curve_key(r: &ResultRow) -> CurveKey {
    (
        r.server.clone(),
        r.config.clone(),
        r.engine.clone(),
        r.workload.clone(),
        r.rate.map(|_| r.concurrency),
    )
}

/// Each curve's levels in increasing load, from the successful rows.
fn levels_by_curve(rows: &[ResultRow]) -> IndexMap<CurveKey, Vec<Level>> {
    let mut groups: IndexMap<CurveKey, Vec<&ResultRow>> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok()) {
        groups.entry(curve_key(r)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(key, rows)| {
            let mut loads: Vec<u32> = rows.iter().map(|r| load_of(r)).collect();
            loads.sort_unstable();
            loads.dedup();
            let levels = loads
                .iter()
                .map(|&l| {
                    let at: Vec<&ResultRow> =
                        rows.iter().copied().filter(|r| load_of(r) == l).collect();
                    level(l, &at)
                })
                .collect();
            (key, levels)
        })
        .collect()
}

fn limits(spec: &LoadCurveSpec) -> Limits {
    Limits {
        p99_ms: spec.p99_limit_ms(),
        error_rate: spec.error_pct.map(|p| p / 100.0),
    }
}

/// Where a sweep stops: for each curve whose stop rule has fired, the highest level still to
/// run (the one that showed the knee, or the first past a limit); higher levels are skipped.
/// Read from the first iteration's rows, so that every iteration runs the same levels and a
/// resumed run decides as the first attempt did.
pub fn sweep_stops(
    spec: &LoadCurveSpec,
    until: Until,
    rows: &[ResultRow],
) -> IndexMap<CurveKey, u32> {
    let first: Vec<ResultRow> = rows.iter().filter(|r| r.iteration == 1).cloned().collect();
    let mut out = IndexMap::new();
    for (key, levels) in levels_by_curve(&first) {
        let points: Vec<LoadPoint> = levels.iter().map(Level::point).collect();
        let stop = match until {
            Until::Knee => knee(&points, spec.min_gain_pct).map(|i| i + 1),
            Until::Limit => points.iter().position(|p| !limits(spec).holds(p)),
        };
        if let Some(i) = stop {
            out.insert(key, levels[i].load);
        }
    }
    out
}

/// Whether a sweep that stopped at `stops` skips the cell that `row` would be.
pub fn skipped(stops: &IndexMap<CurveKey, u32>, row: &ResultRow) -> bool {
    stops
        .get(&curve_key(row))
        .is_some_and(|&last| load_of(row) > last)
}

/// The curves of a run: one per server, config, engine and workload (and connections, in
/// open loop) with two or more load levels measured.
pub fn curves(spec: &LoadCurveSpec, rows: &[ResultRow]) -> Vec<LoadCurve> {
    let limits = limits(spec);
    let mut out = Vec::new();
    for ((server, config, engine, workload, conns), levels) in levels_by_curve(rows) {
        if levels.len() < 2 {
            continue;
        }
        let open = conns.is_some();
        let unit = match open {
            true => "arrivals/s",
            false => "connections",
        };
        let points: Vec<LoadPoint> = levels.iter().map(Level::point).collect();
        let k = knee(&points, spec.min_gain_pct);
        let has_limits = limits.p99_ms.is_some() || limits.error_rate.is_some();
        let ms = has_limits
            .then(|| max_sustainable(&points, limits))
            .flatten();
        let ms3 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "n/a".into());
        let table_rows = levels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut marks = Vec::new();
                if k == Some(i) {
                    marks.push("knee");
                }
                if ms == Some(i) {
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
            })
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
        out.push(LoadCurve {
            title: crate::escape::md_text(&parts.join(" / ")),
            align: format!("|{}---|", "---:|".repeat(header.len() - 1)),
            header: header.into_iter().map(String::from).collect(),
            rows: table_rows,
            knee: match k {
                Some(i) => format!(
                    "The knee is at {} {unit}: the next level gained at most {}% while p99 rose",
                    levels[i].load, spec.min_gain_pct
                ),
                None => format!(
                    "No knee: throughput still rose by more than {}% at every step (or p99 did not rise)",
                    spec.min_gain_pct
                ),
            },
            max_sustainable: match (has_limits, ms) {
                (false, _) => String::new(),
                (true, Some(i)) => format!(
                    "maximum sustainable load under the limits ({}): {} {unit}",
                    spec.limits_text(),
                    levels[i].load
                ),
                (true, None) => format!(
                    "no level stays within the limits ({})",
                    spec.limits_text()
                ),
            },
        });
    }
    out
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

    #[test]
    fn marks_the_knee_and_the_maximum_sustainable_load() {
        let rows = vec![
            row(1, 1, 100.0, 1.0, 0),
            row(2, 1, 195.0, 1.1, 0),
            row(4, 1, 370.0, 1.4, 0),
            row(4, 2, 390.0, 1.6, 0),
            row(8, 1, 390.0, 9.0, 39),
            row(16, 1, 1.0, 1.0, 0),
        ];
        let spec = LoadCurveSpec {
            min_gain_pct: 5.0,
            p99: Some(crate::input::Length::parse("5ms").unwrap()),
            error_pct: Some(1.0),
        };
        let mut rows = rows;
        rows[5].status = Status::Failed; // a failed level is not on the curve
        let c = curves(&spec, &rows);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!(c.title, "db / on / ps");
        let loads: Vec<&str> = c.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(loads, ["1", "2", "4", "8"]);
        // Level 4: the mean of its two iterations; knee and max sustainable both there.
        assert_eq!(c.rows[2][1], "380");
        assert_eq!(c.rows[2][4], "1.500");
        assert_eq!(c.rows[2][8], "knee, max sustainable");
        // 39 errors of 3939 operations; server CPU 5 s in 10 s = 50% of a core.
        assert_eq!(c.rows[3][5], "0.99");
        assert_eq!(c.rows[3][7], "50");
        assert!(c.knee.contains("at 4 connections"), "{}", c.knee);
        assert!(
            c.max_sustainable
                .contains("(p99 <= 5 ms, errors <= 1%): 4 connections"),
            "{}",
            c.max_sustainable
        );
    }

    #[test]
    fn a_sweep_stops_after_the_knee_or_the_first_broken_limit_as_its_first_iteration_says() {
        let mut rows = vec![
            row(1, 1, 100.0, 1.0, 0),
            row(2, 1, 195.0, 1.1, 0),
            row(4, 1, 370.0, 1.4, 0),
            row(8, 1, 375.0, 9.0, 0),
        ];
        let spec = LoadCurveSpec {
            p99: Some(crate::input::Length::parse("5ms").unwrap()),
            ..LoadCurveSpec::default()
        };
        // The knee is at 4 (8 gained 1.4% while p99 rose): 8 was the last level to run.
        let knee = sweep_stops(&spec, Until::Knee, &rows);
        assert_eq!(knee.values().copied().collect::<Vec<_>>(), [8]);
        assert!(skipped(&knee, &row(16, 1, 0.0, 0.0, 0)));
        assert!(!skipped(&knee, &row(8, 2, 0.0, 0.0, 0)));
        // 8 breaks p99 <= 5 ms first.
        let limit = sweep_stops(&spec, Until::Limit, &rows);
        assert_eq!(limit.values().copied().collect::<Vec<_>>(), [8]);
        // A later iteration's rows do not move the decision.
        rows.push(row(8, 2, 900.0, 1.0, 0));
        assert_eq!(sweep_stops(&spec, Until::Knee, &rows), knee);
        // Still climbing, within limits: no stop.
        assert!(sweep_stops(&spec, Until::Knee, &rows[..3]).is_empty());
        assert!(sweep_stops(&spec, Until::Limit, &rows[..3]).is_empty());
        // Another deployment's curve is its own.
        let mut other = row(16, 1, 0.0, 0.0, 0);
        other.config = "off".into();
        assert!(!skipped(&knee, &other));
    }

    #[test]
    fn open_loop_levels_are_rates_and_a_level_that_fell_behind_is_marked() {
        let open = |rate: u32, achieved: f64, missed: u64, p99: f64| ResultRow {
            rate: Some(rate),
            achieved_rate: Some(achieved),
            scheduled: Some(rate as u64 * 10),
            late_starts: Some(0),
            missed_starts: Some(missed),
            ..row(8, 1, achieved, p99, 0)
        };
        let rows = vec![
            open(1000, 1000.0, 0, 1.0),
            open(2000, 1990.0, 3, 1.2),
            open(4000, 2500.0, 15000, 900.0),
        ];
        let c = curves(&LoadCurveSpec::default(), &rows);
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
        let flat = vec![
            open(1000, 1000.0, 0, 1.0),
            open(2000, 1990.0, 0, 1.2),
            open(4000, 2000.0, 9000, 900.0),
        ];
        let c = curves(&LoadCurveSpec::default(), &flat);
        assert!(c[0].knee.contains("at 2000 arrivals/s"), "{}", c[0].knee);
    }

    #[test]
    fn a_curve_needs_two_levels_and_limits_are_optional() {
        let spec = LoadCurveSpec {
            min_gain_pct: 5.0,
            p99: None,
            error_pct: None,
        };
        assert!(curves(&spec, &[row(1, 1, 100.0, 1.0, 0)]).is_empty());
        let c = curves(&spec, &[row(1, 1, 100.0, 1.0, 0), row(2, 1, 200.0, 1.0, 0)]);
        assert!(c[0].knee.starts_with("No knee"), "{}", c[0].knee);
        assert_eq!(c[0].max_sustainable, "");
    }
}
