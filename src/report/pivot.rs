//! The numbers behind the summary: per-cell statistics over iterations, pivoted into
//! tables (rows x columns, one table per value of the remaining dimensions), and each cell's
//! change against the baseline cell. Pure: rendering is the template's job.

use indexmap::IndexMap;
use serde::Serialize;

use crate::matrix::model::Matrix;
use crate::matrix::model::Order;
use crate::model::metric::Metric;
use crate::model::Dimension;
use crate::results::samples::Series;
use crate::results::ResultRow;
use crate::stats::jumps::jumped_rounds;
use crate::stats::paired_change::paired_change;
use crate::stats::{batch_means, change, change_batches, summarize, Basis, Change, Confidence};

/// Where a cell's interval comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Spread {
    /// Two or more iterations: the t interval of their mean.
    Iterations,
    /// One iteration: batch means of its per-second samples (see `stats::batch`).
    BatchMeans,
    /// One iteration and no usable samples: no interval.
    None,
}

/// One cell's iterations of one metric.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CellStats {
    pub(crate) dims: IndexMap<String, String>,
    pub(crate) values: Vec<f64>,
    pub(crate) n: usize,
    pub(crate) mean: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) stddev: Option<f64>,
    pub(crate) cv_pct: Option<f64>,
    /// Half-width of the interval of the mean, in percent of the mean.
    pub(crate) half_pct: Option<f64>,
    pub(crate) spread: Spread,
    /// With `Spread::BatchMeans`: the batch means that stand in for iterations.
    pub(crate) batches: Vec<f64>,
    /// Each value's round (its iteration) and host CPU pressure, in `values`' order.
    pub(crate) rounds: Vec<(u32, Option<f64>)>,
    /// The matrix ran its cells in shared rounds (`repeat.order` interleaved or shuffled):
    /// two cells' values of one round were measured together and are compared paired.
    pub(crate) paired: bool,
}

impl CellStats {
    fn new(
        dims: IndexMap<String, String>,
        values: Vec<f64>,
        series: Option<&Vec<f64>>,
        conf: Confidence,
    ) -> Option<CellStats> {
        let s = summarize(&values, conf)?;
        let batches = match (s.n, series) {
            (1, Some(series)) => batch_means(series).map(|b| b.means).unwrap_or_default(),
            _ => Vec::new(),
        };
        let (spread, half_pct) = if s.n > 1 {
            (Spread::Iterations, s.half_width_pct())
        } else if let Some(h) = summarize(&batches, conf).and_then(|b| b.half_width_pct()) {
            (Spread::BatchMeans, Some(h))
        } else {
            (Spread::None, None)
        };
        Some(CellStats {
            dims,
            values,
            n: s.n,
            mean: s.mean,
            min: s.min,
            max: s.max,
            stddev: s.stddev,
            cv_pct: s.cv.map(|c| c * 100.0),
            half_pct,
            spread,
            batches: if spread == Spread::BatchMeans {
                batches
            } else {
                Vec::new()
            },
            rounds: Vec::new(),
            paired: false,
        })
    }
}

/// A rendered-ready table: header and rows of strings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Table {
    pub(crate) header: Vec<String>,
    /// Markdown alignment row: first column left, numbers right.
    pub(crate) align: String,
    pub(crate) rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: Vec<String>, rows: Vec<Vec<String>>) -> Table {
        let align = format!("|---|{}", "---:|".repeat(header.len().saturating_sub(1)));
        Table {
            header,
            align,
            rows,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Section {
    /// The fixed dimension values of this table, e.g. `server = mariadb-10.11`; empty if one.
    pub(crate) title: String,
    pub(crate) values: Table,
    pub(crate) change: Option<Table>,
}

/// One iteration's value, its round (the iteration number) and its host CPU pressure.
type Measured = (f64, u32, Option<f64>);

/// Group ok rows by cell (all dimensions) in matrix order and summarise `metric`.
/// `series` holds the per-second samples of the metric (for cells measured once).
pub(crate) fn cell_stats(
    matrix: &Matrix,
    rows: &[ResultRow],
    metric: &Metric,
    series: &Series,
    conf: Confidence,
) -> Vec<CellStats> {
    let mut groups: IndexMap<Vec<String>, Vec<Measured>> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok()) {
        if let Some(v) = metric.value(r) {
            let key: Vec<String> = Dimension::ALL.iter().map(|d| r.dim(*d)).collect();
            let round = (v, r.iteration, r.host_cpu_pressure_pct);
            groups.entry(key).or_default().push(round);
        }
    }
    let paired = matrix.repeat.order != Order::Sequential;
    groups.sort_by(|a, _, b, _| order_key(matrix, a).cmp(&order_key(matrix, b)));
    groups
        .into_iter()
        .filter_map(|(key, values)| {
            // The samples' key is the cell's (`CellKey`: a closed loop's empty rate left out).
            let cell = crate::model::CellKey::of(|d| {
                let i = Dimension::ALL.iter().position(|x| *x == d).unwrap_or(0);
                key[i].clone()
            });
            let one = series.get(&(cell.as_str().to_string(), values[0].1));
            let dims = Dimension::ALL
                .iter()
                .map(|d| d.to_string())
                .zip(key)
                .collect();
            let mut s = CellStats::new(dims, values.iter().map(|v| v.0).collect(), one, conf)?;
            s.rounds = values.iter().map(|v| (v.1, v.2)).collect();
            s.paired = paired;
            Some(s)
        })
        .collect()
}

/// Position of each dimension value on its matrix axis (unknown values sort last).
fn order_key(m: &Matrix, key: &[String]) -> Vec<usize> {
    Dimension::ALL
        .iter()
        .zip(key)
        .map(|(d, v)| m.axis(*d).iter().position(|x| x == v).unwrap_or(usize::MAX))
        .collect()
}

fn positions(m: &Matrix, dims: &IndexMap<String, String>, which: &[String]) -> Vec<usize> {
    which
        .iter()
        .map(|d| {
            // `report.rows`/`columns` were checked when the matrix was loaded.
            (Dimension::parse(d).map(|d| m.axis(d)))
                .unwrap_or_default()
                .iter()
                .position(|v| Some(v) == dims.get(d))
                .unwrap_or(usize::MAX)
        })
        .collect()
}

fn label(dims: &IndexMap<String, String>, which: &[String]) -> String {
    let parts: Vec<&str> = which
        .iter()
        .filter_map(|d| dims.get(d).map(String::as_str))
        .filter(|v| !v.is_empty())
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" / ")
    }
}

/// Pivot tables of `metric` as the matrix's `report` section asks.
pub(crate) fn sections(
    matrix: &Matrix,
    stats: &[CellStats],
    metric: &Metric,
    conf: Confidence,
) -> Vec<Section> {
    let spec = &matrix.report;
    // Dimensions neither in rows nor columns that take more than one value split the tables.
    let split: Vec<String> = Dimension::ALL
        .iter()
        .map(|d| d.to_string())
        .filter(|d| !spec.rows.contains(d) && !spec.columns.contains(d))
        .filter(|d| stats.iter().any(|s| s.dims.get(d) != stats[0].dims.get(d)))
        .collect();
    let mut by_section: IndexMap<String, Vec<&CellStats>> = IndexMap::new();
    for s in stats {
        let title = split
            .iter()
            .map(|d| format!("{d} = {}", s.dims[d]))
            .collect::<Vec<_>>()
            .join(", ");
        by_section.entry(title).or_default().push(s);
    }
    let baseline_of = |s: &CellStats| baseline_of(matrix, stats, s);
    by_section
        .into_iter()
        .map(|(title, cells)| {
            // Rows and columns in the order of their own dimensions' axes.
            let mut row_keys: IndexMap<String, Vec<usize>> = IndexMap::new();
            let mut col_keys: IndexMap<String, Vec<usize>> = IndexMap::new();
            for c in &cells {
                row_keys.insert(
                    label(&c.dims, &spec.rows),
                    positions(matrix, &c.dims, &spec.rows),
                );
                col_keys.insert(
                    label(&c.dims, &spec.columns),
                    positions(matrix, &c.dims, &spec.columns),
                );
            }
            row_keys.sort_by(|_, a, _, b| a.cmp(b));
            col_keys.sort_by(|_, a, _, b| a.cmp(b));
            let find = |r: &str, c: &str| {
                cells
                    .iter()
                    .find(|s| label(&s.dims, &spec.rows) == r && label(&s.dims, &spec.columns) == c)
            };
            let mut header = vec![spec.rows.join(" / ")];
            header.extend(col_keys.keys().cloned());
            let values = Table::new(
                header.clone(),
                row_keys
                    .keys()
                    .map(|r| {
                        let mut line = vec![r.clone()];
                        line.extend(col_keys.keys().map(|c| match find(r, c) {
                            Some(s) => value_text(metric, s),
                            None => "n/a".into(),
                        }));
                        line
                    })
                    .collect(),
            );
            let change = (!spec.baseline.is_empty()).then(|| {
                Table::new(
                    header,
                    row_keys
                        .keys()
                        .map(|r| {
                            let mut line = vec![r.clone()];
                            line.extend(col_keys.keys().map(|c| match find(r, c) {
                                Some(s) => change_text(metric, s, baseline_of(s), conf),
                                None => "n/a".into(),
                            }));
                            line
                        })
                        .collect(),
                )
            });
            Section {
                title,
                values,
                change,
            }
        })
        .collect()
}

/// The cell `s` is compared with: `s` with `report.baseline`'s values put in (itself when it
/// is a baseline cell); None without a baseline or when the matrix has no such cell.
pub(crate) fn baseline_of<'a>(
    matrix: &Matrix,
    stats: &'a [CellStats],
    s: &CellStats,
) -> Option<&'a CellStats> {
    let spec = &matrix.report;
    if spec.baseline.is_empty() {
        return None;
    }
    let mut want = s.dims.clone();
    for (d, v) in &spec.baseline {
        want.insert(d.clone(), v.clone());
    }
    stats.iter().find(|b| b.dims == want)
}

/// The change of `s` against its baseline cell `b` with its interval: paired when both ran
/// in shared rounds, else Welch's on their iterations, else from batch means; None without
/// an interval.
pub(crate) fn change_of(b: &CellStats, s: &CellStats, conf: Confidence) -> Option<Change> {
    (paired_text(b, s, conf).map(|(c, _)| c)).or_else(|| unpaired_change(b, s, conf))
}

/// The change of two cells' iterations (or batch means) as independent samples.
fn unpaired_change(b: &CellStats, s: &CellStats, conf: Confidence) -> Option<Change> {
    match (b.spread, s.spread) {
        (Spread::Iterations, Spread::Iterations) => change(&b.values, &s.values, None, conf),
        (Spread::BatchMeans, Spread::BatchMeans) => {
            change_batches(b.mean, &b.batches, s.mean, &s.batches, conf)
        }
        _ => None,
    }
}

/// `1639 ±2.1%`: the mean and the half-width of its interval relative to it; `±2.1%ᵇ` when
/// the interval comes from batch means of one iteration; `1639 (n=1)` without one.
pub(crate) fn value_text(metric: &Metric, s: &CellStats) -> String {
    match (s.spread, s.half_pct) {
        (Spread::Iterations, Some(h)) => format!("{} ±{h:.1}%", metric.format(s.mean)),
        (Spread::BatchMeans, Some(h)) => format!("{} ±{h:.1}%ᵇ", metric.format(s.mean)),
        _ => format!("{} (n={})", metric.format(s.mean), s.n),
    }
}

/// `-46.5% [-60.1%, -28.3%] ** worse`: the change against the baseline cell as a ratio of
/// geometric means, its interval on the log scale at the confidence level, the significance
/// mark (`~` when the interval includes no change) and `better`/`worse` by the metric's
/// direction. Cells measured once: the ratio of the two values, with the variance from their
/// batch means (marked `ᵇ`) when both have them; otherwise the change alone, with
/// `(n=1, no interval)`.
pub(crate) fn change_text(
    metric: &Metric,
    s: &CellStats,
    base: Option<&CellStats>,
    conf: Confidence,
) -> String {
    let Some(b) = base else {
        return "no baseline".into();
    };
    if b.dims == s.dims {
        return "baseline".into();
    }
    // The paired change when the cells shared rounds (with its note), else the unpaired one.
    let (tested, note) = match paired_text(b, s, conf) {
        Some((c, note)) => (Some(c), Some(note)),
        None => (unpaired_change(b, s, conf), None),
    };
    match tested {
        Some(c) => {
            let tag = if c.basis == Basis::BatchMeans {
                "ᵇ"
            } else {
                ""
            };
            let judged = if conf.significant(c.p) {
                format!(
                    "{}{tag} {} {}",
                    c.text(),
                    conf.mark(c.p),
                    c.direction(metric.higher_is_better)
                )
            } else {
                format!("{}{tag} ~", c.text())
            };
            match note {
                Some(note) => format!("{judged} ({note})"),
                None => judged,
            }
        }
        None if b.mean != 0.0 => format!(
            "{:+.1}% (n={}, no interval)",
            (s.mean / b.mean - 1.0) * 100.0,
            s.n.min(b.n)
        ),
        None => "n/a".into(),
    }
}

/// The paired change of two cells measured in the same rounds, and the note that says so:
/// which analysis, how many rounds, the paired mean beside a Hodges-Lehmann change, and the
/// rounds whose host pressure jumped (`stats::jumps`). None unless both cells ran in shared
/// rounds and at least 2 rounds hold both.
fn paired_text(b: &CellStats, s: &CellStats, conf: Confidence) -> Option<(Change, String)> {
    if !(b.paired && s.paired) {
        return None;
    }
    let mut pairs = Vec::new();
    let mut pressure = Vec::new();
    for (i, (round, bp)) in b.rounds.iter().enumerate() {
        let Some(j) = s.rounds.iter().position(|r| r.0 == *round) else {
            continue;
        };
        pairs.push((b.values[i], s.values[j]));
        if let Some(p) = [*bp, s.rounds[j].1].into_iter().flatten().reduce(f64::max) {
            pressure.push((*round, p));
        }
    }
    let pc = paired_change(&pairs, conf)?;
    let c = pc.change()?;
    let mut note = match c.basis {
        Basis::PairedHodgesLehmann => format!("paired Hodges-Lehmann, {} rounds", pc.rounds),
        _ => format!("paired mean, {} rounds", pc.rounds),
    };
    if let (Basis::PairedHodgesLehmann, Some(m)) = (c.basis, pc.mean) {
        if let (Some(lo), Some(hi)) = (m.low, m.high) {
            let pct = |x: f64| x.exp_m1() * 100.0;
            let (e, lo, hi) = (pct(m.estimate), pct(lo), pct(hi));
            note.push_str(&format!("; mean {e:+.1}% [{lo:+.1}%, {hi:+.1}%]"));
        }
    }
    let jumped = jumped_rounds(&pressure);
    if !jumped.is_empty() {
        let list: Vec<String> = jumped.iter().map(u32::to_string).collect();
        note.push_str(&format!(
            "; host pressure jumped in round {}",
            list.join(", ")
        ));
    }
    Some((c, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Matrix {
        crate::input::yaml::from_str(
            "servers: {s: {image: x}}\nconfigs: {off: {}, on: {}}\nengines: [InnoDB, MyISAM]\n\
             workloads: {w: {slap: {}}}\nlength: 10\n\
             report: {metric: qps, rows: [workload], columns: [engine, config], baseline: {config: off}}\n",
        )
        .unwrap()
    }

    fn row(engine: &str, config: &str, it: u32, qps: f64) -> ResultRow {
        ResultRow {
            server: "s".into(),
            config: config.into(),
            engine: engine.into(),
            workload: "w".into(),
            concurrency: 1,
            iteration: it,
            status: crate::model::Status::Ok,
            qps: Some(qps),
            ..Default::default()
        }
    }

    #[test]
    fn pivots_with_change_against_baseline() {
        let m = matrix();
        let rows = vec![
            row("MyISAM", "on", 1, 50.0),
            row("InnoDB", "off", 1, 100.0),
            row("InnoDB", "off", 2, 110.0),
            row("InnoDB", "on", 1, 40.0),
            row("MyISAM", "off", 1, 200.0),
            ResultRow {
                status: crate::model::Status::Failed,
                ..row("MyISAM", "off", 2, 1.0)
            },
        ];
        let metric = Metric::find("qps").unwrap();
        let stats = cell_stats(&m, &rows, metric, &Series::new(), Confidence::default());
        assert_eq!(stats.len(), 4);
        assert_eq!(
            stats[0].dims["engine"], "InnoDB",
            "matrix order, not file order"
        );
        let secs = sections(&m, &stats, metric, Confidence::default());
        assert_eq!(secs.len(), 1);
        assert_eq!(
            secs[0].values.header,
            [
                "workload",
                "InnoDB / off",
                "InnoDB / on",
                "MyISAM / off",
                "MyISAM / on"
            ]
        );
        // scipy: t.ppf(0.975, 1) * stdev([100, 110]) / sqrt(2) / 105 = 60.51%.
        assert_eq!(secs[0].values.rows[0][1], "105 ±60.5%");
        assert_eq!(
            secs[0].values.rows[0][3], "200 (n=1)",
            "the failed iteration is left out"
        );
        let change = secs[0].change.as_ref().unwrap();
        assert_eq!(
            change.rows[0][1..],
            [
                "baseline",
                "-61.9% (n=1, no interval)",
                "baseline",
                "-75.0% (n=1, no interval)"
            ]
        );
    }

    /// Reference: scipy 1.17.1, `r = ttest_ind(log(b), log(a), equal_var=False)`, change
    /// `expm1(mean(log b) - mean(log a))`, interval `expm1(r.confidence_interval(0.95))`:
    /// [100, 102, 98] -> [80, 82, 79]: p = 0.000164, -19.67% [-23.14%, -16.03%];
    /// -> [101, 97, 103]: p = 0.890, +0.32% [-5.76%, +6.79%].
    #[test]
    fn cells_of_shared_rounds_are_compared_paired() {
        use crate::stats::paired_change::tests::{BASE, CAND};
        let cell = |engine: &str, v: &[f64]| {
            let dims = [("engine", engine)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut s = CellStats::new(dims, v.to_vec(), None, Confidence::default()).unwrap();
            // Round 7 (the wild one of BASE/CAND) ran while the host was busy.
            let busy = |r: u32| if r == 7 { 60.0 } else { 5.0 };
            s.rounds = (1..=v.len() as u32).map(|r| (r, Some(busy(r)))).collect();
            s.paired = true;
            s
        };
        let (base, cand) = (cell("a", &BASE), cell("b", &CAND));
        let qps = Metric::find("qps").unwrap();
        // tests/ref/paired_intervals.py, "12 rounds": Hodges-Lehmann -0.04972 [-0.05466,
        // -0.04337] (p = 0.034) and mean -0.03402 [-0.07185, +0.00381] on the log scale.
        assert_eq!(
            change_text(qps, &cand, Some(&base), Confidence::default()),
            "-4.9% [-5.3%, -4.2%] * worse (paired Hodges-Lehmann, 12 rounds; mean -3.3% \
             [-6.9%, +0.4%]; host pressure jumped in round 7)"
        );
        // Without shared rounds the same values are compared unpaired (Welch).
        let unpaired = CellStats {
            paired: false,
            ..cand.clone()
        };
        let text = change_text(qps, &unpaired, Some(&base), Confidence::default());
        assert!(!text.contains("paired"), "{text}");
    }

    #[test]
    fn change_marks_significance_and_direction() {
        let cell = |engine: &str, v: &[f64]| {
            let dims = [("engine", engine)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            CellStats::new(dims, v.to_vec(), None, Confidence::default()).unwrap()
        };
        let base = cell("a", &[100.0, 102.0, 98.0]);
        let slower = cell("b", &[80.0, 82.0, 79.0]);
        let same = cell("c", &[101.0, 97.0, 103.0]);
        let qps = Metric::find("qps").unwrap();
        let secs = Metric::find("seconds").unwrap();
        assert_eq!(
            change_text(qps, &slower, Some(&base), Confidence::default()),
            "-19.7% [-23.1%, -16.0%] *** worse"
        );
        assert_eq!(
            change_text(secs, &slower, Some(&base), Confidence::default()),
            "-19.7% [-23.1%, -16.0%] *** better"
        );
        assert_eq!(
            change_text(qps, &same, Some(&base), Confidence::default()),
            "+0.3% [-5.8%, +6.8%] ~"
        );
        // At 99.99% the same slowdown is no longer significant (p = 0.000164).
        let strict = Confidence::new(0.9999).unwrap();
        assert!(change_text(qps, &slower, Some(&base), strict).ends_with(" ~"));
        assert_eq!(
            change_text(qps, &base, Some(&base), Confidence::default()),
            "baseline"
        );
    }
}
