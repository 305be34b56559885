//! Markdown: a run's summary (through its minijinja template), a comparison for a pull
//! request or a CI step summary, a history. Every text from a run is escaped for a table cell.

use anyhow::Result;

use super::{Exporter, RunView};
use crate::compare::env::{self, EnvDiff};
use crate::compare::history::{ChangePoint, History, Point, Series};
use crate::compare::join::{Comparison, MetricChange, Verdict};
use crate::model::metric::Metric;
use crate::stats::{Basis, Confidence};

pub(crate) struct Markdown;

impl Exporter for Markdown {
    fn needs_matrix(&self) -> bool {
        // The pivots and the summary template follow the matrix's `report:` block.
        true
    }

    /// summary.md, rendered again from the stored files (the stored one is left as it is).
    fn run(&self, run: &RunView) -> Result<String> {
        let matrix = run
            .matrix
            .ok_or_else(|| anyhow::anyhow!("invariant: the Markdown summary needs the matrix"))?;
        crate::report::summary::render(run.dir, matrix, run.template)
    }

    /// What changed in each candidate's environment, then the tables.
    fn compare(&self, diffs: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        let mut out: String = diffs.iter().map(env::markdown).collect();
        out.push_str(&self::comparisons(comparisons));
        Ok(out)
    }

    /// What changed from one run to the next, above the series.
    fn history(&self, diffs: &[EnvDiff], history: &History) -> Result<String> {
        let mut out: String = diffs.iter().map(env::markdown).collect();
        out.push_str(&self::history(history));
        Ok(out)
    }
}

pub(crate) use crate::escape::md_cell as md;
use crate::escape::md_code;

fn num(metric: &str, v: f64) -> String {
    match Metric::find(metric) {
        Some(m) => m.format(v),
        None => format!("{v:.3}"),
    }
}

/// `1639 ±2.1% (5)`: mean, the half-width of its interval relative to it, and n.
fn side_text(metric: &str, side: &crate::compare::join::Side) -> String {
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

pub(crate) fn p_num(p: f64) -> String {
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
    // The environment differs, or a side was client-bound: said next to the verdict it
    // may explain.
    let mut text = text;
    if ch.env_differs {
        text.push_str(" †");
    }
    if ch.client_bound {
        text.push_str(" ‡");
    }
    text
}

/// What the interval of a change includes.
fn basis_text(c: &Comparison, ch: &MetricChange) -> String {
    match (ch.basis, ch.noise_runs) {
        (Some(Basis::IterationsAndRuns), Some(r)) => format!("iterations + runs ({r})"),
        (Some(Basis::IterationsAndAssumedRuns), _) if c.noise_runs_read == 0 => {
            "iterations + run noise assumed (no store)".into()
        }
        (Some(Basis::IterationsAndAssumedRuns), _) => {
            "iterations + run noise assumed (< 3 runs in store)".into()
        }
        (Some(Basis::Counted), _) => "counted: the range of the counts".into(),
        (Some(_), _) => "iterations only".into(),
        (None, _) => "n/a".into(),
    }
}

pub(crate) fn comparisons(comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    for c in comparisons {
        let conf = Confidence::new(c.confidence).unwrap_or_default();
        out.push_str(&format!(
            "## rmatrix compare: `{}` against baseline `{}`\n\n",
            md_code(&c.candidate.run_id),
            md_code(&c.baseline.run_id)
        ));
        if c.environment.is_some() {
            out.push_str(
                "**The environments differ** (see above): verdicts marked † compare more \
                 than the change under test.\n\n",
            );
        }
        unprotected(&mut out, c);
        comparison_summary(&mut out, c, conf);
        family(&mut out, c);
        if !c.changes.is_empty() {
            changes_table(&mut out, c, conf);
        }
        not_compared(&mut out, c);
        client_bound(&mut out, c);
        profiles(&mut out, c);
        out.push('\n');
    }
    out
}

/// The differential flame graphs of `--profiles`, one image each, and the counted cells'
/// instructions by function.
fn profiles(out: &mut String, c: &Comparison) {
    for d in &c.counted_profiles {
        out.push_str(&format!(
            "\nInstructions per operation by function, counted: {} (the functions whose own \
             instructions moved most; every function in [{}]({})):\n\n\
             | function | own, baseline | own, candidate | own change | inclusive, baseline | \
             inclusive, candidate | inclusive change |\n|---|---:|---:|---:|---:|---:|---:|\n",
            md(&d.cell),
            md(&d.file),
            crate::escape::md_link_dest(&d.file)
        ));
        for f in &d.functions {
            out.push_str(&format!(
                "| {} | {:.1} | {:.1} | {:+.1} | {:.1} | {:.1} | {:+.1} |\n",
                md(&f.function),
                f.baseline_own,
                f.candidate_own,
                f.own_change(),
                f.baseline_inclusive,
                f.candidate_inclusive,
                f.inclusive_change(),
            ));
        }
    }
    if !c.profiles.is_empty() {
        out.push_str(
            "\nDifferential flame graphs of the server's CPU (red: the candidate spent more of \
             its samples there, blue: less):\n\n",
        );
        for p in &c.profiles {
            out.push_str(&format!(
                "![{}]({})\n",
                md(&p.cell),
                crate::escape::md_link_dest(&p.file)
            ));
        }
    }
}

/// The cells whose client was client-bound, on either side.
fn client_bound(out: &mut String, c: &Comparison) {
    if !c.client_bound.is_empty() {
        out.push_str(
            "\nClient-bound (the client wanted most of the CPU it may use; those numbers \
             are its limit):\n\n",
        );
        for cell in &c.client_bound {
            out.push_str(&format!("- {}\n", md(cell)));
        }
    }
}

/// The verdict counts, what a verdict means, and what the intervals leave out.
fn comparison_summary(out: &mut String, c: &Comparison, conf: Confidence) {
    let k = &c.counts;
    let regressed = if k.regressed > 0 {
        format!("**{} regressed**", k.regressed)
    } else {
        "0 regressed".into()
    };
    out.push_str(&format!(
        "{regressed}, {} improved, {} small, {} unchanged, {} cannot tell. A verdict needs a \
         change of at least {}% that is significant at {conf} confidence (small: significant, \
         its interval inside ±{}%): the change is the \
         ratio of geometric means, its {conf} interval from Welch's test on the logarithms \
         of the iterations{}. {}. Values: mean ±{conf} interval (iterations).\n",
        k.improved,
        k.small,
        k.unchanged,
        k.cannot_tell,
        c.threshold_pct,
        c.threshold_pct,
        match (c.noise_runs_read > 0, c.assumed_run_noise_pct > 0.0) {
            (true, _) => ", plus the run-to-run variance of the cell learned from earlier runs",
            (false, true) => ", plus an assumed run-to-run variance",
            (false, false) => "",
        },
        conf.legend(),
    ));
    noise_notice(out, c);
    counted_notice(out, c);
    if !c.ignored_dimensions.is_empty() {
        out.push_str(&format!(
            "Cells joined ignoring: {}.\n",
            c.ignored_dimensions.join(", ")
        ));
    }
}

/// The changes whose noise hides a change of the threshold's size, before anything else.
fn unprotected(out: &mut String, c: &Comparison) {
    let cells: Vec<&MetricChange> = (c.changes.iter())
        .filter(|ch| ch.sees_threshold == Some(false))
        .collect();
    if cells.is_empty() {
        return;
    }
    out.push_str(&format!(
        "**Unprotected: {} of {} changes cannot see the {}% threshold**: their noise would \
         hide a regression of that size (`sees` is the smallest one each flags 4 times in \
         5):\n\n",
        cells.len(),
        c.changes.len(),
        c.threshold_pct
    ));
    for ch in cells {
        out.push_str(&format!(
            "- {} {}: sees {}\n",
            md(&ch.cell),
            ch.metric,
            sees_text(ch)
        ));
    }
    out.push('\n');
}

/// What the intervals leave out or assume about run-to-run noise.
fn noise_notice(out: &mut String, c: &Comparison) {
    let count = |b: Basis| c.changes.iter().filter(|ch| ch.basis == Some(b)).count();
    let assumed = count(Basis::IterationsAndAssumedRuns);
    let store = if c.noise_runs_read == 0 {
        "no store: pass `--noise-from` with 3 or more earlier runs of the baseline to learn it"
            .to_string()
    } else {
        format!(
            "the {} runs given with `--noise-from` hold fewer than 3 runs of these cells",
            c.noise_runs_read
        )
    };
    if assumed > 0 {
        out.push_str(&format!(
            "\n**Run noise assumed for {assumed} of {} changes** ({store}): their intervals \
             add run means that vary by a CV of {}% to the iterations (`--assume-run-noise`, \
             see docs/compare.md).\n",
            c.changes.len(),
            c.assumed_run_noise_pct,
        ));
    }
    let within_only = count(Basis::Iterations);
    if within_only > 0 {
        out.push_str(&format!(
            "\n**Run-to-run noise unknown for {within_only} of {} changes**: their intervals \
             include only the spread between the iterations of each run, which understates \
             how much a cell moves between runs; such a verdict can take run-to-run noise \
             for a change ({store}).\n",
            c.changes.len(),
        ));
    }
}

/// How counted metrics were judged: no test, a threshold of their own.
fn counted_notice(out: &mut String, c: &Comparison) {
    let n = (c.changes.iter())
        .filter(|ch| ch.basis == Some(Basis::Counted))
        .count();
    if n > 0 {
        out.push_str(&format!(
            "\n**{n} of {} changes are counted** (instructions counted under callgrind, \
             docs/counted.md): the same build gives the same count on any machine, so they are \
             not tested. Such a change is flagged when it is at least {}% \
             (`--counted-threshold`) and the two sides' counts do not overlap; its interval is \
             the range of the counts.\n",
            c.changes.len(),
            c.counted_threshold_pct,
        ));
    }
}

/// How the per-cell alpha adds up over this compare, and what `--fdr` changed.
fn family(out: &mut String, c: &Comparison) {
    let f = &c.family;
    if f.tests < 2 {
        return;
    }
    out.push_str(&format!(
        "\n{} changes tested at alpha {} each: with nothing changed, {:.2} would be \
         significant by chance, and at least one with probability {:.0}% (a false regression \
         also needs the wrong direction and the threshold, so fewer fail the gate). {}\n",
        f.tests,
        f.alpha,
        f.expected_false_alarms,
        f.p_any_false_alarm * 100.0,
        if c.fdr {
            "`--fdr`: significance is judged on Benjamini-Hochberg adjusted p-values \
             (`p adj`), which keeps the expected share of false flags among the flagged \
             changes under alpha."
        } else {
            "`--fdr` judges them on Benjamini-Hochberg adjusted p-values instead."
        }
    ));
}

/// `7.2% or more`: the change a cell flags with 80% power.
fn sees_text(ch: &MetricChange) -> String {
    match ch.mde_pct {
        Some(m) if m >= 99.95 && ch.higher_is_better => "nothing short of a drop to 0".into(),
        Some(m) => format!(
            "{} of {m:.1}% or more",
            if ch.higher_is_better {
                "drops"
            } else {
                "rises"
            }
        ),
        None => "n/a".into(),
    }
}

/// One row per metric change of the cells both runs have.
fn changes_table(out: &mut String, c: &Comparison, conf: Confidence) {
    let adj = if c.fdr { " p adj |" } else { "" };
    out.push_str(&format!(
        "\n| cell | metric | baseline | candidate | change | {conf} interval | p |{adj} \
         interval includes | sees | verdict |\n\
         |---|---|---:|---:|---:|---:|---:|{}---|---|---|\n",
        if c.fdr { "---:|" } else { "" }
    ));
    for ch in &c.changes {
        // A counted change is exact to a tenth of a percent: shown to a hundredth.
        let pct = |v: f64| match ch.basis {
            Some(Basis::Counted) => format!("{v:+.2}%"),
            _ => format!("{v:+.1}%"),
        };
        let ci = match (ch.ci_low_pct, ch.ci_high_pct) {
            (Some(lo), Some(hi)) => format!("{} .. {}", pct(lo), pct(hi)),
            _ => "n/a".into(),
        };
        let adj = match (c.fdr, ch.p_adjusted) {
            (false, _) => String::new(),
            (true, p) => format!(" {} |", p_text(p, conf)),
        };
        out.push_str(&format!(
            "| {} | {} {} | {} | {} | {} | {} | {} |{adj} {} | {} | {} |\n",
            md(&ch.cell),
            ch.metric,
            if ch.higher_is_better { "↑" } else { "↓" },
            side_text(&ch.metric, &ch.baseline),
            side_text(&ch.metric, &ch.candidate),
            ch.change_pct.map(pct).unwrap_or_else(|| "n/a".into()),
            ci,
            p_text(ch.p_value, conf),
            basis_text(c, ch),
            sees_text(ch),
            verdict_text(ch),
        ));
    }
    out.push_str(&format!(
        "\n↑ higher is better, ↓ lower is better. sees: the smallest regression (a drop for ↑, \
         a rise for ↓) this cell flags with 80% power at {conf} and the {}% threshold.",
        c.threshold_pct
    ));
    if c.changes.iter().any(|ch| ch.env_differs) {
        out.push_str(
            " †: the two runs' environments differ for this cell (listed above); the \
             verdict may reflect that difference and not only the change under test.",
        );
    }
    if c.changes.iter().any(|ch| ch.client_bound) {
        out.push_str(
            " ‡: the client was client-bound for this cell (listed below): that side's \
             number is the client's limit, not the server's.",
        );
    }
    out.push('\n');
}

/// The cells one side lacks, or has no successful iteration of.
fn not_compared(out: &mut String, c: &Comparison) {
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
}

fn fmt_value(metric: &str, v: f64) -> String {
    Metric::find(metric)
        .map(|m| m.format(v))
        .unwrap_or_else(|| format!("{v:.3}"))
}

fn cp_text(cp: &ChangePoint, conf: Confidence) -> String {
    let pct = |v: Option<f64>| v.map(|c| format!("{c:+.1}%"));
    let text = match (
        pct(cp.change_pct),
        pct(cp.change_lo_pct),
        pct(cp.change_hi_pct),
    ) {
        (Some(c), Some(lo), Some(hi)) => format!("{c} [{lo}, {hi}]"),
        (Some(c), _, _) => c,
        _ => "from 0".into(),
    };
    format!("{text} {} {}", cp.direction, conf.mark(cp.p_value))
}

pub(crate) fn history(h: &History) -> String {
    let conf = Confidence::new(h.confidence).unwrap_or_default();
    let mut out = String::from("## rmatrix history\n\n");
    out.push_str(&format!(
        "{} runs{}. Change points: E-divisive means over each cell's whole series of run \
         means (as Hunter and Apache Otava do), each kept when Student's t-test on the \
         logarithms between its neighbouring segments is significant at {conf} confidence \
         and the change is at least {}%; a segment holds at least {} runs (the newest {} \
         cannot start a change point yet). {}.\n",
        h.runs.len(),
        match (h.runs.first(), h.runs.last()) {
            (Some(a), Some(b)) => format!(", {} to {}", md(&a.started_at), md(&b.started_at)),
            _ => String::new(),
        },
        h.threshold_pct,
        h.min_points,
        h.min_points.saturating_sub(1),
        conf.legend(),
    ));
    change_points(&mut out, h, conf);
    // The compact view: one row per cell, one column per recent run (long format: CSV).
    let first_shown = h.runs.len().saturating_sub(h.last);
    let mut metrics: Vec<&str> = h.series.iter().map(|s| s.metric.as_str()).collect();
    metrics.dedup();
    for metric in metrics {
        metric_table(&mut out, h, metric, first_shown);
    }
    out
}

/// Every change point found, as one table.
fn change_points(out: &mut String, h: &History, conf: Confidence) {
    let flagged: Vec<(&Series, &Point, &ChangePoint)> = h
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .filter_map(move |p| p.change_point.as_ref().map(|cp| (s, p, cp)))
        })
        .collect();
    if flagged.is_empty() {
        out.push_str("\nNo change points.\n");
    } else {
        out.push_str(
            "\n### Change points\n\n| cell | metric | from run | runs | before | after | change | p |\n\
             |---|---|---|---:|---:|---:|---:|---:|\n",
        );
        for (s, p, cp) in flagged {
            out.push_str(&format!(
                "| {} | {} | {} ({}) | {} → {} | {} | {} | {} | {} |\n",
                md(&s.cell),
                s.metric,
                md(&h.runs[p.run].run_id),
                md(&h.runs[p.run].started_at),
                cp.runs_before,
                cp.runs_after,
                fmt_value(&s.metric, cp.before),
                fmt_value(&s.metric, cp.after),
                cp_text(cp, conf),
                p_num(cp.p_value)
            ));
        }
    }
}

/// One metric's compact view: a row per cell, a column per shown run from `first_shown`.
fn metric_table(out: &mut String, h: &History, metric: &str, first_shown: usize) {
    let series: Vec<&Series> = h.series.iter().filter(|s| s.metric == metric).collect();
    let runs: Vec<usize> = (first_shown..h.runs.len())
        .filter(|i| series.iter().any(|s| s.points.iter().any(|p| p.run == *i)))
        .collect();
    let first = series[0];
    out.push_str(&format!(
        "\n### {metric} ({}, {} is better): {} cells, the last {} of {} runs\n\n",
        first.unit,
        if first.higher_is_better {
            "higher"
        } else {
            "lower"
        },
        series.len(),
        runs.len(),
        h.runs.len(),
    ));
    let keys: Vec<String> = runs
        .iter()
        .map(|i| {
            format!(
                "#{} `{}` {}",
                i + 1,
                md_code(&h.runs[*i].run_id),
                md(&h.runs[*i].started_at)
            )
        })
        .collect();
    out.push_str(&format!("Runs: {}.\n", keys.join("; ")));
    out.push_str(&format!(
        "`▲`/`▼`: a change point (better/worse) starts at this run; `-`: no such cell in the \
         run. sees: the smallest regression between two segments of {} runs (the fewest a change \
         point needs on each side) flagged with 80% power, from the spread of the cell's run \
         means.\n\n| cell |",
        h.min_points
    ));
    for i in &runs {
        out.push_str(&format!(" #{} |", i + 1));
    }
    out.push_str(&format!(
        " sees |\n|---|{}---:|\n",
        "---:|".repeat(runs.len())
    ));
    for s in &series {
        out.push_str(&format!("| {} |", md(&s.cell)));
        for i in &runs {
            let text = match s.points.iter().find(|p| p.run == *i) {
                None => "-".to_string(),
                Some(p) => match &p.change_point {
                    None => fmt_value(metric, p.mean),
                    Some(cp) => format!(
                        "**{}** {}",
                        fmt_value(metric, p.mean),
                        if cp.direction == "better" {
                            "▲"
                        } else {
                            "▼"
                        }
                    ),
                },
            };
            out.push_str(&format!(" {text} |"));
        }
        match s.mde_pct {
            Some(m) => out.push_str(&format!(" {m:.1}% |\n")),
            None => out.push_str(" n/a |\n"),
        }
    }
}
