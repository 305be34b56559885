//! Comparison output: Markdown for a pull request or CI step summary, CSV and JSON for
//! scripts (both carry `format_version`).

use super::join::{Comparison, MetricChange, Verdict, COMPARE_FORMAT_VERSION};
use crate::model::metric::Metric;
use crate::stats::{Basis, Confidence};

pub use crate::escape::md_cell as md;

fn num(metric: &str, v: f64) -> String {
    match Metric::find(metric) {
        Some(m) => m.format(v),
        None => format!("{v:.3}"),
    }
}

/// `1639 ±2.1% (5)`: mean, the half-width of its interval relative to it, and n.
fn side_text(metric: &str, side: &super::join::Side) -> String {
    match side.half_width.filter(|_| side.mean != 0.0) {
        Some(h) => format!(
            "{} ±{:.1}% ({})",
            num(metric, side.mean),
            h / side.mean.abs() * 100.0,
            side.n
        ),
        None => format!("{} ({})", num(metric, side.mean), side.n),
    }
}

fn p_text(p: Option<f64>, conf: Confidence) -> String {
    match p {
        None => "n/a".into(),
        Some(p) => format!("{} {}", p_num(p), conf.mark(p)),
    }
}

pub fn p_num(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

fn verdict_text(ch: &MetricChange) -> String {
    let text = match ch.verdict {
        Verdict::Regressed => "**regressed**".into(),
        v => v.to_string(),
    };
    // The environment differs for this cell: say so next to the verdict it may explain.
    if ch.env_differs {
        format!("{text} †")
    } else {
        text
    }
}

/// What the interval of a change includes.
fn basis_text(ch: &MetricChange) -> String {
    match (ch.basis, ch.noise_runs) {
        (Some(Basis::IterationsAndRuns), Some(r)) => format!("iterations + runs ({r})"),
        (Some(_), _) => "iterations only".into(),
        (None, _) => "n/a".into(),
    }
}

pub fn markdown(comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    for c in comparisons {
        let conf = Confidence::new(c.confidence).unwrap_or_default();
        out.push_str(&format!(
            "## rmatrix compare: `{}` against baseline `{}`\n\n",
            md(&c.candidate.run_id),
            md(&c.baseline.run_id)
        ));
        let k = &c.counts;
        if c.environment.is_some() {
            out.push_str(
                "**The environments differ** (see above): verdicts marked † compare more \
                 than the change under test.\n\n",
            );
        }
        let regressed = if k.regressed > 0 {
            format!("**{} regressed**", k.regressed)
        } else {
            "0 regressed".into()
        };
        out.push_str(&format!(
            "{regressed}, {} improved, {} unchanged, {} too noisy to tell. A verdict needs a \
             change of at least {}% that is significant at {conf} confidence: the change is the \
             ratio of geometric means, its {conf} interval from Welch's test on the logarithms \
             of the iterations{}. {}. Values: mean ±{conf} interval (iterations).\n",
            k.improved,
            k.unchanged,
            k.too_noisy,
            c.threshold_pct,
            if c.noise_runs_read > 0 {
                ", plus the run-to-run variance of the cell learned from earlier runs"
            } else {
                ""
            },
            conf.legend(),
        ));
        let within_only = c
            .changes
            .iter()
            .filter(|ch| ch.basis == Some(Basis::Iterations))
            .count();
        if within_only > 0 {
            out.push_str(&format!(
                "\n**Run-to-run noise unknown for {within_only} of {} changes**: their intervals \
                 include only the spread between the iterations of each run, which understates \
                 how much a cell moves between runs; such a verdict can take run-to-run noise \
                 for a change. {}\n",
                c.changes.len(),
                if c.noise_runs_read == 0 {
                    "Pass `--noise-from` with 3 or more earlier runs of the baseline (see \
                     docs/compare.md)."
                        .to_string()
                } else {
                    format!(
                        "The {} runs given with `--noise-from` hold fewer than 3 runs of these \
                         cells.",
                        c.noise_runs_read
                    )
                }
            ));
        }
        if !c.ignored_dimensions.is_empty() {
            out.push_str(&format!(
                "Cells joined ignoring: {}.\n",
                c.ignored_dimensions.join(", ")
            ));
        }
        if !c.changes.is_empty() {
            out.push_str(&format!(
                "\n| cell | metric | baseline | candidate | change | {conf} interval | p | \
                 interval includes | verdict |\n\
                 |---|---|---:|---:|---:|---:|---:|---|---|\n",
            ));
            for ch in &c.changes {
                let ci = match (ch.ci_low_pct, ch.ci_high_pct) {
                    (Some(lo), Some(hi)) => format!("{lo:+.1}% .. {hi:+.1}%"),
                    _ => "n/a".into(),
                };
                out.push_str(&format!(
                    "| {} | {} {} | {} | {} | {} | {} | {} | {} | {} |\n",
                    md(&ch.cell),
                    ch.metric,
                    if ch.higher_is_better { "↑" } else { "↓" },
                    side_text(&ch.metric, &ch.baseline),
                    side_text(&ch.metric, &ch.candidate),
                    ch.change_pct
                        .map(|v| format!("{v:+.1}%"))
                        .unwrap_or_else(|| "n/a".into()),
                    ci,
                    p_text(ch.p_value, conf),
                    basis_text(ch),
                    verdict_text(ch),
                ));
            }
            out.push_str("\n↑ higher is better, ↓ lower is better.");
            if c.changes.iter().any(|ch| ch.env_differs) {
                out.push_str(
                    " †: the two runs' environments differ for this cell (listed above); the \
                     verdict may reflect that difference and not only the change under test.",
                );
            }
            out.push('\n');
        }
        for (title, cells) in [
            ("Only in the baseline", &c.only_in_baseline),
            ("Only in the candidate", &c.only_in_candidate),
            (
                "No successful iteration on one side",
                &c.no_successful_iteration,
            ),
        ] {
            if !cells.is_empty() {
                out.push_str(&format!("\n{title} (not compared):\n\n"));
                for cell in cells.iter() {
                    out.push_str(&format!("- {}\n", md(cell)));
                }
            }
        }
        out.push('\n');
    }
    out
}

pub const CSV_COLUMNS: [&str; 28] = [
    "format_version",
    "baseline",
    "candidate",
    "cell",
    "server",
    "config",
    "engine",
    "workload",
    "concurrency",
    "metric",
    "higher_is_better",
    "baseline_n",
    "baseline_mean",
    "baseline_stddev",
    "candidate_n",
    "candidate_mean",
    "candidate_stddev",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "threshold_pct",
    "alpha",
    "verdict",
    "confidence",
    "basis",
    "noise_runs",
    "env_differs",
];

/// One line per cell x metric; cells on one side only have verdict `only_in_baseline` or
/// `only_in_candidate`, cells without a successful iteration on a side
/// `no_successful_iteration`, with empty numbers.
pub fn csv(comparisons: &[Comparison]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for c in comparisons {
        for ch in &c.changes {
            let dim = |d: &str| ch.dims.get(d).cloned().unwrap_or_default();
            w.write_record([
                COMPARE_FORMAT_VERSION.to_string(),
                c.baseline.run_id.clone(),
                c.candidate.run_id.clone(),
                ch.cell.clone(),
                dim("server"),
                dim("config"),
                dim("engine"),
                dim("workload"),
                dim("concurrency"),
                ch.metric.clone(),
                ch.higher_is_better.to_string(),
                ch.baseline.n.to_string(),
                ch.baseline.mean.to_string(),
                opt(ch.baseline.stddev),
                ch.candidate.n.to_string(),
                ch.candidate.mean.to_string(),
                opt(ch.candidate.stddev),
                opt(ch.change_pct),
                opt(ch.ci_low_pct),
                opt(ch.ci_high_pct),
                opt(ch.p_value),
                c.threshold_pct.to_string(),
                c.alpha.to_string(),
                serde_json::to_value(ch.verdict)?
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                c.confidence.to_string(),
                ch.basis
                    .map(|b| serde_json::to_value(b).map(|v| v.as_str().unwrap_or("").to_string()))
                    .transpose()?
                    .unwrap_or_default(),
                ch.noise_runs.map(|n| n.to_string()).unwrap_or_default(),
                ch.env_differs.to_string(),
            ])?;
        }
        for (verdict, cells) in [
            ("only_in_baseline", &c.only_in_baseline),
            ("only_in_candidate", &c.only_in_candidate),
            ("no_successful_iteration", &c.no_successful_iteration),
        ] {
            for cell in cells.iter() {
                let mut rec = vec![String::new(); CSV_COLUMNS.len()];
                rec[0] = COMPARE_FORMAT_VERSION.to_string();
                rec[1] = c.baseline.run_id.clone();
                rec[2] = c.candidate.run_id.clone();
                rec[3] = cell.clone();
                rec[23] = verdict.into();
                rec[24] = c.confidence.to_string();
                w.write_record(&rec)?;
            }
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

pub fn json(comparisons: &[Comparison]) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(comparisons)? + "\n")
}
