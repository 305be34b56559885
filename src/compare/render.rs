//! Comparison output: Markdown for a pull request or CI step summary, CSV and JSON for
//! scripts (both carry `format_version`).

use super::join::{Comparison, MetricChange, Verdict, COMPARE_FORMAT_VERSION};
use crate::measure::welch::stars;
use crate::report::metric::Metric;

fn num(metric: &str, v: f64) -> String {
    match Metric::find(metric) {
        Some(m) => m.format(v),
        None => format!("{v:.3}"),
    }
}

/// `1639 ±2.1%`: mean and the 95% CI of the mean relative to it.
fn side_text(metric: &str, mean: f64, ci95: f64, n: usize) -> String {
    if n > 1 && mean != 0.0 {
        format!(
            "{} ±{:.1}% ({n})",
            num(metric, mean),
            ci95 / mean.abs() * 100.0
        )
    } else {
        format!("{} ({n})", num(metric, mean))
    }
}

fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:+.1}%"))
        .unwrap_or_else(|| "n/a".into())
}

fn p_text(p: Option<f64>, alpha: f64) -> String {
    match p {
        None => "n/a".into(),
        Some(p) if p >= alpha => format!("{} ~", p_num(p)),
        Some(p) => format!("{} {}", p_num(p), stars(p)).trim_end().to_string(),
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
    match ch.verdict {
        Verdict::Regressed => "**regressed**".into(),
        v => v.to_string(),
    }
}

fn level(alpha: f64) -> String {
    let l = (1.0 - alpha) * 100.0;
    if (l - l.round()).abs() < 1e-9 {
        format!("{l:.0}%")
    } else {
        format!("{l}%")
    }
}

pub fn markdown(comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    for c in comparisons {
        out.push_str(&format!(
            "## rmatrix compare: `{}` against baseline `{}`\n\n",
            c.candidate.run_id, c.baseline.run_id
        ));
        let k = &c.counts;
        let regressed = if k.regressed > 0 {
            format!("**{} regressed**", k.regressed)
        } else {
            "0 regressed".into()
        };
        out.push_str(&format!(
            "{regressed}, {} improved, {} unchanged, {} too noisy to tell. Threshold ±{}%, \
             alpha {}: Welch's t-test over the iterations of each cell (on their logarithms \
             when positive); the interval is the {} confidence interval of the change. \
             Values: mean ±95% CI (iterations). \
             p: `~` not significant, `*` < 0.05, `**` < 0.01, `***` < 0.001.\n",
            k.improved,
            k.unchanged,
            k.too_noisy,
            c.threshold_pct,
            c.alpha,
            level(c.alpha)
        ));
        if !c.ignored_dimensions.is_empty() {
            out.push_str(&format!(
                "Cells joined ignoring: {}.\n",
                c.ignored_dimensions.join(", ")
            ));
        }
        if !c.changes.is_empty() {
            out.push_str(&format!(
                "\n| cell | metric | baseline | candidate | change | {} CI | p | verdict |\n\
                 |---|---|---:|---:|---:|---:|---:|---|\n",
                level(c.alpha)
            ));
            for ch in &c.changes {
                let ci = match (ch.ci_low_pct, ch.ci_high_pct) {
                    (Some(lo), Some(hi)) => format!("{lo:+.1}% .. {hi:+.1}%"),
                    _ => "n/a".into(),
                };
                out.push_str(&format!(
                    "| {} | {} {} | {} | {} | {} | {} | {} | {} |\n",
                    ch.cell,
                    ch.metric,
                    if ch.higher_is_better { "↑" } else { "↓" },
                    side_text(
                        &ch.metric,
                        ch.baseline.mean,
                        ch.baseline.ci95,
                        ch.baseline.n
                    ),
                    side_text(
                        &ch.metric,
                        ch.candidate.mean,
                        ch.candidate.ci95,
                        ch.candidate.n
                    ),
                    pct(ch.change_pct),
                    ci,
                    p_text(ch.p_value, c.alpha),
                    verdict_text(ch),
                ));
            }
            out.push_str("\n↑ higher is better, ↓ lower is better.\n");
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
                    out.push_str(&format!("- {cell}\n"));
                }
            }
        }
        out.push('\n');
    }
    out
}

pub const CSV_COLUMNS: [&str; 24] = [
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
                ch.baseline.stddev.to_string(),
                ch.candidate.n.to_string(),
                ch.candidate.mean.to_string(),
                ch.candidate.stddev.to_string(),
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
                rec[CSV_COLUMNS.len() - 1] = verdict.into();
                w.write_record(&rec)?;
            }
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

pub fn json(comparisons: &[Comparison]) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(comparisons)? + "\n")
}
