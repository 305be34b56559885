//! The numbers behind the summary: per-cell statistics over iterations, pivoted into
//! tables (rows x columns, one table per value of the remaining dimensions), and each cell's
//! change against the baseline cell. Pure: rendering is the template's job.

use indexmap::IndexMap;
use serde::Serialize;

use super::metric::Metric;
use crate::matrix::model::Matrix;
use crate::matrix::plan::DIMENSIONS;
use crate::measure::stats::{summarize, Summary};
use crate::measure::welch::{stars, welch};
use crate::results::ResultRow;

/// One cell's iterations of one metric.
#[derive(Debug, Clone, Serialize)]
pub struct CellStats {
    pub dims: IndexMap<String, String>,
    pub values: Vec<f64>,
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
    pub cv_pct: f64,
    pub ci95: f64,
}

impl CellStats {
    fn new(dims: IndexMap<String, String>, values: Vec<f64>) -> Option<CellStats> {
        let Summary {
            n,
            mean,
            min,
            max,
            stddev,
            cv,
            ci95,
        } = summarize(&values)?;
        Some(CellStats {
            dims,
            values,
            n,
            mean,
            min,
            max,
            stddev,
            cv_pct: cv * 100.0,
            ci95,
        })
    }
}

/// A rendered-ready table: header and rows of strings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    /// Markdown alignment row: first column left, numbers right.
    pub align: String,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: Vec<String>, rows: Vec<Vec<String>>) -> Table {
        let align = format!("|---|{}", "---:|".repeat(header.len().saturating_sub(1)));
        Table {
            header,
            align,
            rows,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// The fixed dimension values of this table, e.g. `server = mariadb-10.11`; empty if one.
    pub title: String,
    pub values: Table,
    pub change: Option<Table>,
}

/// Group ok rows by cell (all dimensions) in matrix order and summarise `metric`.
pub fn cell_stats(matrix: &Matrix, rows: &[ResultRow], metric: &Metric) -> Vec<CellStats> {
    let mut groups: IndexMap<Vec<String>, Vec<f64>> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok()) {
        if let Some(v) = metric.value(r) {
            let key: Vec<String> = DIMENSIONS.iter().map(|d| r.dim(d)).collect();
            groups.entry(key).or_default().push(v);
        }
    }
    groups.sort_by(|a, _, b, _| order_key(matrix, a).cmp(&order_key(matrix, b)));
    groups
        .into_iter()
        .filter_map(|(key, values)| {
            let dims = DIMENSIONS.iter().map(|d| d.to_string()).zip(key).collect();
            CellStats::new(dims, values)
        })
        .collect()
}

/// Position of each dimension value on its matrix axis (unknown values sort last).
fn order_key(m: &Matrix, key: &[String]) -> Vec<usize> {
    DIMENSIONS
        .iter()
        .zip(key)
        .map(|(d, v)| axis(m, d).iter().position(|x| x == v).unwrap_or(usize::MAX))
        .collect()
}

pub fn axis(m: &Matrix, dim: &str) -> Vec<String> {
    match dim {
        "server" => m.servers.keys().cloned().collect(),
        "config" => m.configs.keys().cloned().collect(),
        "engine" => m.engines.clone(),
        "workload" => m.workloads.keys().cloned().collect(),
        "concurrency" => m.concurrency.iter().map(|c| c.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn positions(m: &Matrix, dims: &IndexMap<String, String>, which: &[String]) -> Vec<usize> {
    which
        .iter()
        .map(|d| {
            axis(m, d)
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
pub fn sections(matrix: &Matrix, stats: &[CellStats], metric: &Metric) -> Vec<Section> {
    let spec = &matrix.report;
    // Dimensions neither in rows nor columns that take more than one value split the tables.
    let split: Vec<String> = DIMENSIONS
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
    let baseline_of = |s: &CellStats| -> Option<&CellStats> {
        if spec.baseline.is_empty() {
            return None;
        }
        let mut want = s.dims.clone();
        for (d, v) in &spec.baseline {
            want.insert(d.clone(), v.clone());
        }
        stats.iter().find(|b| b.dims == want)
    };
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
                                Some(s) => change_text(metric, s, baseline_of(s)),
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

/// `1639 ±2.1%`: the mean and the 95% confidence half-width relative to it.
pub fn value_text(metric: &Metric, s: &CellStats) -> String {
    if s.n > 1 && s.mean != 0.0 {
        format!(
            "{} ±{:.1}%",
            metric.format(s.mean),
            s.ci95 / s.mean.abs() * 100.0
        )
    } else {
        metric.format(s.mean)
    }
}

pub fn change_pct(value: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| (value - base) / base.abs() * 100.0)
}

/// `-58.5% ±3.1% *** worse`: the change of the mean against the baseline cell, the
/// half-width of its 95% confidence interval (Welch, relative to the baseline mean), stars by
/// p-value (Welch's t-test: `*` < 0.05, `**` < 0.01, `***` < 0.001) and `better`/`worse` by the
/// metric's direction; `~` marks a change inside the noise (p >= 0.05). With fewer than two
/// iterations on a side there is nothing to test: the change alone.
pub fn change_text(metric: &Metric, s: &CellStats, base: Option<&CellStats>) -> String {
    match base {
        None => "no baseline".into(),
        Some(b) if b.dims == s.dims => "baseline".into(),
        Some(b) => match (change_pct(s.mean, b.mean), welch(&b.values, &s.values)) {
            (None, _) => "n/a".into(),
            (Some(p), None) => format!("{p:+.1}%"),
            (Some(p), Some(w)) => {
                let (lo, hi) = w.ci(0.95);
                let half = (hi - lo) / 2.0 / b.mean.abs() * 100.0;
                if w.p >= 0.05 {
                    format!("{p:+.1}% ±{half:.1}% ~")
                } else {
                    let better = (w.diff > 0.0) == metric.higher_is_better;
                    let word = if better { "better" } else { "worse" };
                    format!("{p:+.1}% ±{half:.1}% {} {word}", stars(w.p))
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Matrix {
        serde_yaml::from_str(
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
            status: "ok".into(),
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
                status: "failed".into(),
                ..row("MyISAM", "off", 2, 1.0)
            },
        ];
        let metric = Metric::find("qps").unwrap();
        let stats = cell_stats(&m, &rows, metric);
        assert_eq!(stats.len(), 4);
        assert_eq!(
            stats[0].dims["engine"], "InnoDB",
            "matrix order, not file order"
        );
        let secs = sections(&m, &stats, metric);
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
        assert_eq!(secs[0].values.rows[0][1], "105 ±60.5%");
        assert_eq!(
            secs[0].values.rows[0][3], "200",
            "the failed iteration is left out"
        );
        let change = secs[0].change.as_ref().unwrap();
        assert_eq!(
            change.rows[0][1..],
            ["baseline", "-61.9%", "baseline", "-75.0%"]
        );
    }

    /// Reference: scipy 1.17.1, `ttest_ind(b, a, equal_var=False)` and its
    /// `confidence_interval(0.95)`: [100, 102, 98] vs [80, 82, 79]: p = 0.000258,
    /// CI -23.81 .. -15.52 (half-width 4.15 = 4.1% of 100); vs [101, 97, 103]: p = 0.883,
    /// half-width 6.24.
    #[test]
    fn change_marks_significance_and_direction() {
        let cell = |engine: &str, v: &[f64]| {
            let dims = [("engine", engine)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            CellStats::new(dims, v.to_vec()).unwrap()
        };
        let base = cell("a", &[100.0, 102.0, 98.0]);
        let slower = cell("b", &[80.0, 82.0, 79.0]);
        let same = cell("c", &[101.0, 97.0, 103.0]);
        let qps = Metric::find("qps").unwrap();
        let secs = Metric::find("seconds").unwrap();
        assert_eq!(
            change_text(qps, &slower, Some(&base)),
            "-19.7% ±4.1% *** worse"
        );
        assert_eq!(
            change_text(secs, &slower, Some(&base)),
            "-19.7% ±4.1% *** better"
        );
        assert_eq!(change_text(qps, &same, Some(&base)), "+0.3% ±6.2% ~");
        assert_eq!(change_text(qps, &base, Some(&base)), "baseline");
    }
}
