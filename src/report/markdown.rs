//! summary.md: the pivot and delta tables rendered through a minijinja template
//! (`reports/templates/summary.md.j2` is built in; users pass their own with --template).

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::pivot::{cell_stats, sections, CellStats, Section, Spread};
use crate::escape::{md_cell, md_code, md_text};
use crate::matrix::model::Matrix;
use crate::model::metric::Metric;
use crate::model::Dimension;
use crate::results::samples::Series;
use crate::results::ResultRow;
use crate::stats::{summarize, Confidence};

pub const DEFAULT_TEMPLATE: &str = include_str!("../../reports/templates/summary.md.j2");

/// What a template sees.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub(crate) title: String,
    pub(crate) description: Option<String>,
    pub(crate) run_id: String,
    pub(crate) started_at: String,
    /// The run's parameters on one line (`rev = HEAD, iters = 3`), empty without any.
    pub(crate) params: String,
    pub(crate) length: String,
    pub(crate) warmup: Option<String>,
    pub(crate) iterations: u32,
    pub(crate) metric: MetricView,
    /// The confidence level of every interval, e.g. `95%`.
    pub(crate) confidence: String,
    /// What the significance marks mean at that level.
    pub(crate) marks: String,
    /// Which kinds of interval the tables show (for their legends).
    pub(crate) spreads: Spreads,
    pub(crate) baseline: String,
    pub(crate) sections: Vec<Section>,
    pub(crate) details: Vec<Detail>,
    pub(crate) failures: Vec<Failure>,
    pub(crate) servers: Vec<ServerView>,
    /// How each server start got its tables (manifest.json's `data`).
    pub(crate) data: Vec<DataView>,
    /// Every result row, for templates that want to compute their own tables.
    pub(crate) rows: Vec<ResultRow>,
    /// Charts drawn into the run directory (`charts/<file>`), to link from the summary.
    pub(crate) charts: Vec<ChartLink>,
    /// Seed 003's load-test tables, with `report.load_curve` or `load.until`.
    pub(crate) load_curves: Vec<super::load_curve::LoadCurve>,
    /// The stability check, with `report.drift`.
    pub(crate) drift: Vec<super::drift::Drift>,
    /// Open loop: the drift's throughput is the served share of each second's target.
    pub(crate) drift_served: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChartLink {
    pub(crate) title: String,
    pub(crate) file: String,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Spreads {
    /// Some cell has two or more iterations.
    pub(crate) iterations: bool,
    /// Some cell measured once has an interval from batch means of its per-second samples.
    pub(crate) batch_means: bool,
    /// Some cell measured once has no interval at all.
    pub(crate) none: bool,
    /// The cells ran in shared rounds (`repeat.order` interleaved or shuffled): changes are
    /// judged on the per-round ratios.
    pub(crate) paired: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct MetricView {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) unit: String,
    pub(crate) higher_is_better: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Detail {
    pub(crate) cell: String,
    pub(crate) n: usize,
    pub(crate) seconds_avg: String,
    pub(crate) seconds_min: String,
    pub(crate) seconds_max: String,
    pub(crate) mean: String,
    pub(crate) stddev: String,
    pub(crate) cv: String,
    pub(crate) p95: String,
    pub(crate) p99: String,
    pub(crate) errors: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Failure {
    pub(crate) cell: String,
    pub(crate) iteration: u32,
    pub(crate) error: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ServerView {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) image: String,
}

/// One start's tables: prepared, kept as a data set, or restored from one.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DataView {
    pub(crate) name: String,
    pub(crate) start: u32,
    pub(crate) how: String,
    pub(crate) dataset: String,
    pub(crate) rows: String,
    pub(crate) seconds: String,
    pub(crate) rows_per_s: String,
    pub(crate) copied_mb: String,
    pub(crate) checked: String,
}

impl DataView {
    fn of(f: &crate::results::manifest::DataFacts) -> DataView {
        let num =
            |v: Option<f64>, digits: usize| v.map(|v| format!("{v:.digits$}")).unwrap_or_default();
        let how = match (&f.note, f.how) {
            (Some(note), _) => format!("prepared (no data set: {note})"),
            (None, h) => format!("{h:?}").to_lowercase(),
        };
        DataView {
            name: md_cell(&format!("{} / {}", f.server, f.config)),
            start: f.start,
            how: md_cell(&how),
            dataset: md_cell(f.dataset.as_deref().unwrap_or("")),
            rows: f.rows.map(|r| r.to_string()).unwrap_or_default(),
            seconds: num(f.seconds, 1),
            rows_per_s: num(f.rows_per_s, 0),
            copied_mb: num(f.bytes.map(|b| b as f64 / 1e6), 1),
            checked: match (&f.verified, f.verify_s) {
                (Some(v), Some(s)) => md_cell(&format!("{v} ({s:.1} s)")),
                (Some(v), None) => md_cell(v),
                _ => String::new(),
            },
        }
    }
}

/// Facts about the run that are not in results.csv (from the manifest).
#[derive(Debug, Default)]
pub struct RunFacts {
    pub(crate) run_id: String,
    pub(crate) started_at: String,
    pub(crate) servers: Vec<ServerView>,
    pub(crate) data: Vec<crate::results::manifest::DataFacts>,
    /// The matrix's parameters as the run resolved them.
    pub(crate) params: indexmap::IndexMap<String, String>,
}

pub(crate) fn cell_name(r: &ResultRow) -> String {
    Dimension::ALL
        .iter()
        .map(|d| match d {
            Dimension::Concurrency => format!("c{}", r.concurrency),
            Dimension::Rate => r.rate.map(|r| format!("{r}/s")).unwrap_or_default(),
            _ => r.dim(*d),
        })
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// `series`: the per-second samples of the report metric (empty when it has none).
pub fn context(matrix: &Matrix, rows: &[ResultRow], facts: &RunFacts, series: &Series) -> Summary {
    let metric = Metric::find(&matrix.report.metric).unwrap_or(&crate::model::metric::METRICS[0]);
    let conf = matrix.report.confidence();
    let stats = cell_stats(matrix, rows, metric, series, conf);
    let spreads = Spreads {
        iterations: stats.iter().any(|s| s.spread == Spread::Iterations),
        batch_means: stats.iter().any(|s| s.spread == Spread::BatchMeans),
        none: stats.iter().any(|s| s.spread == Spread::None),
        paired: stats.iter().any(|s| s.paired),
    };
    let details = stats
        .iter()
        .map(|s| detail(s, rows, metric, conf))
        .collect();
    let failures = rows
        .iter()
        .filter(|r| !r.is_ok())
        .map(|r| Failure {
            cell: cell_name(r),
            iteration: r.iteration,
            error: md_cell(&r.error),
        })
        .collect();
    let baseline = matrix
        .report
        .baseline
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    Summary {
        title: matrix
            .name
            .clone()
            .unwrap_or_else(|| "rmatrix results".into()),
        description: matrix.description.as_deref().map(md_text),
        // In a code span and in prose (the manifest checked them; these keep it so).
        run_id: md_code(&facts.run_id),
        started_at: md_cell(&facts.started_at),
        // Values are the user's text: escaped like a cell, so nothing becomes markup.
        params: (facts.params.iter())
            .map(|(k, v)| match v.is_empty() {
                true => format!("{} = \"\"", md_cell(k)),
                false => format!("{} = {}", md_cell(k), md_cell(v)),
            })
            .collect::<Vec<_>>()
            .join(", "),
        length: (matrix.length.as_ref())
            .map_or_else(|| "the whole suite".into(), crate::input::Length::to_string),
        warmup: matrix.warmup.map(|w| w.to_string()),
        iterations: matrix.iterations,
        metric: MetricView {
            name: metric.name.into(),
            title: metric.title.into(),
            unit: metric.unit.into(),
            higher_is_better: metric.higher_is_better,
        },
        confidence: conf.to_string(),
        marks: conf.legend(),
        spreads,
        baseline,
        sections: sections(matrix, &stats, metric, conf),
        details,
        failures,
        // Versions and image names come from the servers and the engine.
        servers: facts
            .servers
            .iter()
            .map(|s| ServerView {
                name: md_cell(&s.name),
                version: md_cell(&s.version),
                image: md_cell(&s.image),
            })
            .collect(),
        data: facts.data.iter().map(DataView::of).collect(),
        rows: rows.to_vec(),
        charts: Vec::new(),
        // Filled in by `report::summary`, which reads the per-second samples they need.
        load_curves: Vec::new(),
        drift: Vec::new(),
        drift_served: false,
    }
}

/// One cell's row of the details table: its iterations' seconds, spread and percentiles.
fn detail(s: &CellStats, rows: &[ResultRow], metric: &Metric, conf: Confidence) -> Detail {
    let fmt3 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "n/a".into());
    let same: Vec<&ResultRow> = rows
        .iter()
        .filter(|r| {
            r.is_ok()
                && Dimension::ALL
                    .iter()
                    .all(|d| s.dims.get(d.name()) == Some(&r.dim(*d)))
        })
        .collect();
    let secs = summarize(
        &same.iter().filter_map(|r| r.seconds).collect::<Vec<_>>(),
        conf,
    );
    let mean_of = |f: fn(&ResultRow) -> Option<f64>| {
        summarize(&same.iter().filter_map(|r| f(r)).collect::<Vec<_>>(), conf).map(|s| s.mean)
    };
    Detail {
        cell: cell_name(same[0]),
        n: s.n,
        seconds_avg: fmt3(secs.map(|s| s.mean)),
        seconds_min: fmt3(secs.map(|s| s.min)),
        seconds_max: fmt3(secs.map(|s| s.max)),
        mean: metric.format(s.mean),
        // One iteration has no spread to show: say so rather than print 0.
        stddev: s
            .stddev
            .map(|v| metric.format(v))
            .unwrap_or_else(|| "n/a".into()),
        cv: match (s.cv_pct, s.spread, s.half_pct) {
            (Some(v), _, _) => format!("{v:.1}%"),
            (None, Spread::BatchMeans, Some(h)) => format!("n=1, ±{h:.1}%ᵇ"),
            _ => "n=1, no interval".into(),
        },
        p95: fmt3(mean_of(|r| r.lat_p95_ms)),
        p99: fmt3(mean_of(|r| r.lat_p99_ms)),
        errors: same.iter().filter_map(|r| r.errors).sum(),
    }
}

pub fn render(template: &str, ctx: &Summary) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .context("invariant: valid syntax config")?,
    );
    env.add_template("summary", template)
        .context("failed to parse the report template")?;
    let out = env
        .get_template("summary")?
        .render(minijinja::Value::from(minijinja::value::Serde(ctx)))
        .context("failed to render the report template")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(workload: &str, engine: &str, config: &str, it: u32, qps: f64) -> ResultRow {
        ResultRow {
            server: "mariadb-10.11".into(),
            config: config.into(),
            engine: engine.into(),
            workload: workload.into(),
            kind: "slap".into(),
            concurrency: 2,
            iteration: it,
            status: crate::model::Status::Ok,
            queries: Some(10000),
            seconds: Some(10000.0 / qps),
            qps: Some(qps),
            lat_p95_ms: Some(1000.0 / qps),
            lat_p99_ms: Some(2000.0 / qps),
            errors: Some(0),
            ..Default::default()
        }
    }

    /// The summary of a fixed run must match tests/golden/summary.md byte for byte.
    /// After a deliberate change: UPDATE_GOLDEN=1 cargo test --lib report
    #[test]
    fn summary_matches_golden_file() {
        let matrix: Matrix = crate::input::yaml::from_str(
            "name: golden\ndescription: Seed-000 shaped table.\nservers: {mariadb-10.11: {image: x}}\n\
             configs: {binlog-off: {}, binlog-on: {}}\nengines: [MyISAM, InnoDB]\n\
             workloads: {write-guid: {slap: {}}, key-guid: {slap: {}}}\nconcurrency: [2]\niterations: 2\n\
             length: 10000\nreport: {metric: qps, rows: [workload], columns: [engine, config], baseline: {config: binlog-off}}\n",
        )
        .unwrap();
        let mut rows = Vec::new();
        for (w, e, c, a, b) in [
            ("write-guid", "MyISAM", "binlog-off", 1639.0, 1650.0),
            ("write-guid", "MyISAM", "binlog-on", 675.0, 690.0),
            ("write-guid", "InnoDB", "binlog-off", 971.0, 960.0),
            ("write-guid", "InnoDB", "binlog-on", 410.0, 400.0),
            ("key-guid", "MyISAM", "binlog-off", 2500.0, 2510.0),
            ("key-guid", "MyISAM", "binlog-on", 2490.0, 2505.0),
            ("key-guid", "InnoDB", "binlog-off", 2400.0, 2420.0),
        ] {
            rows.push(row(w, e, c, 1, a));
            rows.push(row(w, e, c, 2, b));
        }
        rows.push(row("key-guid", "InnoDB", "binlog-on", 1, 2300.0).failed("server gone away"));
        let facts = RunFacts {
            run_id: "golden-run".into(),
            started_at: "2026-11-29T00:00:00Z".into(),
            servers: vec![ServerView {
                name: "mariadb-10.11 / binlog-off".into(),
                version: "10.11.19".into(),
                image: "rmatrix/mariadb-10.11:abc".into(),
            }],
            ..Default::default()
        };
        let text = render(
            DEFAULT_TEMPLATE,
            &context(&matrix, &rows, &facts, &Series::new()),
        )
        .unwrap();
        // The numbers in the golden file, from an independent source (scipy 1.17.1:
        // r = ttest_ind(log(b), log(a), equal_var=False), expm1 of the mean log difference
        // and of r.confidence_interval(0.95); t.ppf(0.975, 1) * stdev / sqrt(2) / mean):
        //   MyISAM write [1639, 1650] -> [675, 690]: p = 0.00393, -58.50% [-62.52%, -54.05%]
        //   InnoDB write [971, 960] -> [410, 400]: p = 0.00208, -58.06% [-61.66%, -54.11%]
        //   MyISAM key [2500, 2510] -> [2490, 2505]: p = 0.504, -0.30% [-2.08%, +1.51%]
        //   [1639, 1650]: mean 1644.5, half-width 4.25%
        for want in [
            "| write-guid | baseline | -58.5% [-62.5%, -54.0%] ** worse | baseline | -58.1% [-61.7%, -54.1%] ** worse |",
            "| key-guid | baseline | -0.3% [-2.1%, +1.5%] ~ | baseline | n/a |",
            "| write-guid | 1644 ±4.2% |",
            "`**` p < 0.005",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/summary.md");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let golden =
            std::fs::read_to_string(path).expect("golden file; create it with UPDATE_GOLDEN=1");
        assert_eq!(text, golden);
    }

    /// The run's parameters: one line under the run's, each value escaped as a cell is.
    #[test]
    fn parameters_are_one_escaped_line() {
        let matrix: Matrix = crate::input::yaml::from_str(
            "servers: {a: {image: x}}\nworkloads: {w: {slap: {}}}\nlength: 10\n",
        )
        .unwrap();
        let facts = RunFacts {
            params: [("rev", "[x](http://e) <b>|`"), ("iters", "3"), ("tag", "")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        let ctx = context(&matrix, &[], &facts, &Series::new());
        let text = render(DEFAULT_TEMPLATE, &ctx).unwrap();
        let line = "Parameters: rev = \\[x\\](http:\\/\\/e) &lt;b&gt;\\|', iters = 3, tag = \"\".";
        assert!(text.contains(&format!(".\n\n{line}\n")), "{text}");
        let none = render(
            DEFAULT_TEMPLATE,
            &context(&matrix, &[], &RunFacts::default(), &Series::new()),
        );
        assert!(!none.unwrap().contains("Parameters"));
    }
}
