//! The comparison itself: join cells, test each metric, decide a verdict. Pure.

use std::collections::BTreeSet;
use std::fmt;

use indexmap::IndexMap;
use serde::Serialize;

use super::env::EnvDiff;
use super::error::CompareError;
use super::input::{cell_name, Run};
use super::noise::Noise;
use crate::model::metric::Metric;
use crate::model::CellKey;
use crate::report::client_bound;
use crate::stats::multiple::{bh_adjust, family_rate, FamilyRate};
use crate::stats::power::{self, Regression};
use crate::stats::{change, counted, summarize, Basis, Confidence, RunNoise};

/// Version of the JSON and CSV that `compare` and `history` print. 2: one confidence level
/// (`confidence`), log-scale changes, the interval's `basis` and `noise_runs`. 3: the verdict
/// `too_noisy` became `cannot_tell` (and its count), `small` was added.
pub(crate) const COMPARE_FORMAT_VERSION: u32 = 3;

#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Smallest change that counts, in percent of the baseline mean.
    pub(crate) threshold_pct: f64,
    /// The level of every interval; tests run at alpha = 1 - level.
    pub(crate) confidence: Confidence,
    pub(crate) metrics: Vec<&'static Metric>,
    /// Dimensions left out of the join key.
    pub(crate) ignore: Vec<String>,
    /// Run-to-run noise per cell, from `--noise-from` (empty: within-run only).
    pub(crate) noise: Noise,
    /// The CV of run means (percent) assumed for a cell whose run noise `noise` does not
    /// know (`--assume-run-noise`); 0: such a cell rests on its iterations only.
    pub(crate) assumed_run_noise_pct: f64,
    /// Judge significance on Benjamini-Hochberg adjusted p-values (`--fdr`).
    pub(crate) fdr: bool,
    /// Smallest change of a counted metric that counts, in percent (`--counted-threshold`).
    pub(crate) counted_threshold_pct: f64,
}

impl Options {
    pub(crate) fn check(&self) -> Result<(), CompareError> {
        if !(self.threshold_pct >= 0.0 && self.threshold_pct.is_finite()) {
            return Err(CompareError::BadThreshold(self.threshold_pct.to_string()));
        }
        if !(self.counted_threshold_pct >= 0.0 && self.counted_threshold_pct.is_finite()) {
            return Err(CompareError::BadThreshold(
                self.counted_threshold_pct.to_string(),
            ));
        }
        if !(self.assumed_run_noise_pct >= 0.0 && self.assumed_run_noise_pct.is_finite()) {
            return Err(CompareError::BadRunNoise(
                self.assumed_run_noise_pct.to_string(),
            ));
        }
        Ok(())
    }

    /// The run noise a cell's changes carry: learned, else assumed, else none.
    pub(crate) fn run_noise(&self, metric: &str, key: &CellKey) -> Option<RunNoise> {
        let assumed = (self.assumed_run_noise_pct > 0.0)
            .then(|| RunNoise::assumed(self.assumed_run_noise_pct));
        self.noise.get(metric, key).copied().or(assumed)
    }
}

/// `3%`, `3` or `0`: a CV of run means in percent, below 100.
pub(crate) fn parse_run_noise(text: &str) -> Result<f64, CompareError> {
    percent(text)
        .filter(|v| (0.0..100.0).contains(v))
        .ok_or_else(|| CompareError::BadRunNoise(text.into()))
}

/// `plan --target`: the change a cell should see, above the threshold (compare flags only
/// changes beyond it) and below 100%.
pub(crate) fn parse_target(text: &str, threshold_pct: f64) -> Result<f64, CompareError> {
    let bad = |why: String| CompareError::BadTarget {
        text: text.into(),
        why,
    };
    let v = parse_threshold(text)
        .map_err(|_| bad("expected a detectable change in percent, such as `10%`".into()))?;
    match v > threshold_pct && v < 100.0 {
        true => Ok(v),
        false => Err(bad(format!(
            "a target must lie above the threshold ({threshold_pct}%) and below 100%: \
             compare flags only changes beyond the threshold"
        ))),
    }
}

/// `5%`, `5` or `2.5 %`: a finite number of percent, its sign kept.
fn percent(text: &str) -> Option<f64> {
    text.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// `5%`, `5` or `2.5 %` as 5.0 / 2.5.
pub(crate) fn parse_threshold(text: &str) -> Result<f64, CompareError> {
    percent(text)
        .filter(|v| *v >= 0.0)
        .ok_or_else(|| CompareError::BadThreshold(text.into()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Improved,
    Regressed,
    /// Significant, but its interval lies inside ±threshold: a real change too small to count.
    Small,
    /// Not significant and its interval lies inside ±threshold.
    Unchanged,
    /// The interval reaches past the threshold yet the change is not beyond it (or nothing
    /// could be tested): the measurements cannot tell.
    CannotTell,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Small => "small",
            Verdict::Unchanged => "unchanged",
            Verdict::CannotTell => "cannot tell",
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunInfo {
    pub(crate) path: String,
    pub(crate) run_id: String,
    pub(crate) started_at: String,
    /// The matrix's name, for the formats that name a cell by its matrix (JUnit, BMF); the
    /// JSON and CSV keep their columns.
    #[serde(skip)]
    pub(crate) matrix: String,
}

impl From<&Run> for RunInfo {
    fn from(r: &Run) -> RunInfo {
        RunInfo {
            path: r.path.display().to_string(),
            run_id: r.run_id.clone(),
            started_at: r.started_at.clone(),
            matrix: r.matrix_name.clone(),
        }
    }
}

/// One side's iterations of one metric.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Side {
    pub(crate) n: usize,
    pub(crate) mean: f64,
    /// None for a single iteration.
    pub(crate) stddev: Option<f64>,
    /// Half-width of the interval of the mean at the comparison's confidence level.
    pub(crate) half_width: Option<f64>,
    pub(crate) values: Vec<f64>,
}

impl Side {
    fn of(values: &[f64], conf: Confidence) -> Option<Side> {
        let s = summarize(values, conf)?;
        Some(Side {
            n: s.n,
            mean: s.mean,
            stddev: s.stddev,
            half_width: s.half_width,
            values: values.to_vec(),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct MetricChange {
    pub(crate) cell: String,
    pub(crate) dims: IndexMap<String, String>,
    pub(crate) metric: String,
    pub(crate) unit: String,
    pub(crate) higher_is_better: bool,
    pub(crate) baseline: Side,
    pub(crate) candidate: Side,
    /// The change in percent: the ratio of geometric means - 1 when `log_scale`, else
    /// (candidate - baseline) / |baseline|; none when nothing could be tested.
    pub(crate) change_pct: Option<f64>,
    /// The interval of the change in percent at the confidence level.
    pub(crate) ci_low_pct: Option<f64>,
    pub(crate) ci_high_pct: Option<f64>,
    /// Two-sided p-value; none with fewer than two iterations on a side and no run noise.
    pub(crate) p_value: Option<f64>,
    /// The test ran on the logarithms (all values positive), see `stats::change`.
    pub(crate) log_scale: bool,
    /// What the interval accounts for: the iterations only, or also the run-to-run noise.
    pub(crate) basis: Option<Basis>,
    /// Earlier runs the run-to-run noise was learned from.
    pub(crate) noise_runs: Option<usize>,
    /// The smallest regression (a drop when higher is better, a rise when lower is) this
    /// cell flags with 80% power at the confidence level and the threshold, in percent.
    pub(crate) mde_pct: Option<f64>,
    /// The noise alone would not hide a change of the threshold's size; false: unprotected.
    pub(crate) sees_threshold: Option<bool>,
    /// The Benjamini-Hochberg adjusted p-value over this comparison's changes (`--fdr`).
    pub(crate) p_adjusted: Option<f64>,
    pub(crate) verdict: Verdict,
    /// The two runs' environments differ for this cell (host, or its server's image,
    /// version or variables): the verdict may reflect that, not only the variant.
    pub(crate) env_differs: bool,
    /// On one side or both the cell's client wanted most of the CPU it may use (see
    /// `measure::client`): that side's number is the client's limit, not the server's.
    pub(crate) client_bound: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Counts {
    pub(crate) improved: usize,
    pub(crate) regressed: usize,
    pub(crate) small: usize,
    pub(crate) unchanged: usize,
    pub(crate) cannot_tell: usize,
}

/// A candidate run against the baseline run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Comparison {
    pub(crate) format_version: u32,
    pub(crate) test: &'static str,
    pub(crate) baseline: RunInfo,
    pub(crate) candidate: RunInfo,
    pub(crate) threshold_pct: f64,
    /// The threshold of counted metrics (basis `counted`).
    pub(crate) counted_threshold_pct: f64,
    /// Confidence level of the intervals, e.g. 0.95; `alpha` = 1 - confidence.
    pub(crate) confidence: f64,
    pub(crate) alpha: f64,
    /// Runs read for the run-to-run noise (`--noise-from`); 0: none given.
    pub(crate) noise_runs_read: usize,
    /// The CV of run means assumed where no run noise was learned; 0: none assumed.
    pub(crate) assumed_run_noise_pct: f64,
    /// Significance judged on Benjamini-Hochberg adjusted p-values.
    pub(crate) fdr: bool,
    /// How the per-cell alpha adds up over the changes judged here.
    pub(crate) family: FamilyRate,
    /// `cell metric` of the changes that cannot see the threshold (`sees_threshold` false).
    pub(crate) unprotected: Vec<String>,
    pub(crate) ignored_dimensions: Vec<String>,
    pub(crate) counts: Counts,
    pub(crate) changes: Vec<MetricChange>,
    pub(crate) only_in_baseline: Vec<String>,
    pub(crate) only_in_candidate: Vec<String>,
    /// Cells on both sides where one side has no successful iteration, e.g.
    /// `... / c2 (candidate)`: not compared.
    pub(crate) no_successful_iteration: Vec<String>,
    /// How the candidate's environment differs from the baseline's; none when identical.
    pub(crate) environment: Option<EnvDiff>,
    /// The client-bound cells of either run, e.g. `... / c8 (candidate: client busy 97% of
    /// 1 core(s))`.
    pub(crate) client_bound: Vec<String>,
    /// Differential flame graphs of the compared cells (`--profiles`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) profiles: Vec<super::profiles::ProfileDiff>,
    /// Exact differential profiles of the counted cells (`--profiles`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) counted_profiles: Vec<super::counted_diff::CountedDiff>,
}

impl Comparison {
    pub(crate) fn regressed(&self) -> bool {
        self.counts.regressed > 0
    }

    /// The threshold `ch` was judged against: the counted one for a counted change.
    pub(crate) fn threshold_of(&self, ch: &MetricChange) -> f64 {
        match ch.basis {
            Some(Basis::Counted) => self.counted_threshold_pct,
            _ => self.threshold_pct,
        }
    }

    /// Some change cannot be told (`--fail-on-cannot-tell`).
    pub(crate) fn cannot_tell(&self) -> bool {
        self.counts.cannot_tell > 0
    }

    /// Record the environment difference and mark the changes it touches: all of them when
    /// the host differs, else those of the deployments (server x config) that differ.
    pub(crate) fn set_environment(&mut self, diff: EnvDiff) {
        for ch in &mut self.changes {
            let dim = |d: &str| ch.dims.get(d).map(String::as_str).unwrap_or("");
            ch.env_differs =
                !diff.host.is_empty() || diff.deployment(dim("server"), dim("config")).is_some();
        }
        self.environment = (!diff.is_empty()).then_some(diff);
    }
}

pub(crate) fn compare(base: &Run, cand: &Run, opts: &Options) -> Result<Comparison, CompareError> {
    opts.check()?;
    let base_cells = base.cells(&opts.ignore);
    let cand_cells = cand.cells(&opts.ignore);
    let only_in_baseline = only_in(&base_cells, &cand_cells);
    let only_in_candidate = only_in(&cand_cells, &base_cells);
    if base_cells.keys().all(|k| !cand_cells.contains_key(k)) {
        return Err(CompareError::NothingInCommon {
            baseline: base.path.clone(),
            candidate: cand.path.clone(),
        });
    }
    same_counter(base, cand, opts)?;
    let no_successful_iteration = without_success(base, cand, &base_cells, &cand_cells, opts);
    let mut changes = judge_cells(base, cand, &base_cells, opts);
    if opts.fdr {
        adjust_for_fdr(&mut changes, opts);
    }
    Ok(Comparison {
        format_version: COMPARE_FORMAT_VERSION,
        test: "welch-t on logarithms, plus run-to-run variance where known",
        baseline: base.into(),
        candidate: cand.into(),
        threshold_pct: opts.threshold_pct,
        counted_threshold_pct: opts.counted_threshold_pct,
        confidence: opts.confidence.level(),
        alpha: opts.confidence.alpha(),
        noise_runs_read: opts.noise.runs,
        assumed_run_noise_pct: opts.assumed_run_noise_pct,
        fdr: opts.fdr,
        family: family_rate(
            changes.iter().filter(|c| c.p_value.is_some()).count(),
            opts.confidence.alpha(),
        ),
        unprotected: changes
            .iter()
            .filter(|c| c.sees_threshold == Some(false))
            .map(|c| format!("{} {}", c.cell, c.metric))
            .collect(),
        ignored_dimensions: opts.ignore.clone(),
        counts: Counts::of(&changes),
        changes,
        only_in_baseline,
        only_in_candidate,
        no_successful_iteration,
        environment: None,
        client_bound: client_bound_list(base, cand),
        profiles: Vec::new(),
        counted_profiles: Vec::new(),
    })
}

/// A run's cells: join key -> dimensions.
type Cells = IndexMap<CellKey, IndexMap<String, String>>;

/// The names of the cells of `these` that `those` lacks.
fn only_in(these: &Cells, those: &Cells) -> Vec<String> {
    these
        .iter()
        .filter(|(k, _)| !those.contains_key(*k))
        .map(|(_, d)| cell_name(d))
        .collect()
}

/// The cells both runs have where a side has no successful iteration, named with that side.
fn without_success(
    base: &Run,
    cand: &Run,
    base_cells: &Cells,
    cand_cells: &Cells,
    opts: &Options,
) -> Vec<String> {
    let failed_on = |run: &Run, key: &CellKey| {
        !run.rows
            .iter()
            .any(|r| r.is_ok() && super::input::key_of(r, &opts.ignore) == *key)
    };
    let mut out = Vec::new();
    for (key, dims) in base_cells
        .iter()
        .filter(|(k, _)| cand_cells.contains_key(*k))
    {
        for (side, run) in [("baseline", base), ("candidate", cand)] {
            if failed_on(run, key) {
                out.push(format!("{} ({side})", cell_name(dims)));
            }
        }
    }
    out
}

/// Each metric's change in every cell both runs measured, marked client-bound when either
/// run found the cell so.
fn judge_cells(base: &Run, cand: &Run, base_cells: &Cells, opts: &Options) -> Vec<MetricChange> {
    let per_metric: Vec<_> = opts
        .metrics
        .iter()
        .map(|m| {
            (
                m,
                base.samples(m, &opts.ignore),
                cand.samples(m, &opts.ignore),
            )
        })
        .collect();
    let bound: BTreeSet<CellKey> = (client_bound_keys(base, opts).into_iter())
        .chain(client_bound_keys(cand, opts))
        .collect();
    let mut changes = Vec::new();
    for (key, dims) in base_cells {
        for (metric, b, c) in &per_metric {
            let (Some(bs), Some(cs)) = (b.get(key), c.get(key)) else {
                continue;
            };
            if let Some(mut ch) = judge(key, dims, metric, &bs.values, &cs.values, opts) {
                ch.client_bound = bound.contains(key);
                changes.push(ch);
            }
        }
    }
    changes
}

impl Counts {
    /// How many changes got each verdict.
    fn of(changes: &[MetricChange]) -> Counts {
        let mut counts = Counts::default();
        for ch in changes {
            match ch.verdict {
                Verdict::Improved => counts.improved += 1,
                Verdict::Regressed => counts.regressed += 1,
                Verdict::Small => counts.small += 1,
                Verdict::Unchanged => counts.unchanged += 1,
                Verdict::CannotTell => counts.cannot_tell += 1,
            }
        }
        counts
    }
}

/// The client-bound cells of both runs, each with its side and figure.
/// Counts of two counters are not one quantity: a counted metric is compared only between
/// runs counted alike (a run counted by neither has no counts to refuse).
fn same_counter(base: &Run, cand: &Run, opts: &Options) -> Result<(), CompareError> {
    let (b, c) = (&base.counted_by, &cand.counted_by);
    match opts.metrics.iter().find(|m| m.counted) {
        Some(metric) if !b.is_empty() && !c.is_empty() && b != c => {
            Err(CompareError::CountedApart {
                metric: metric.name.to_string(),
                baseline: b.clone(),
                candidate: c.clone(),
            })
        }
        _ => Ok(()),
    }
}

fn client_bound_list(base: &Run, cand: &Run) -> Vec<String> {
    [("baseline", base), ("candidate", cand)]
        .iter()
        .flat_map(|(side, run)| {
            client_bound::cells(&run.rows)
                .into_iter()
                .map(move |b| format!("{} ({side}: {})", b.cell, b.why))
        })
        .collect()
}

/// The cells (their keys after `--ignore`) that were client-bound in `run`.
fn client_bound_keys(run: &Run, opts: &Options) -> BTreeSet<CellKey> {
    let bound: BTreeSet<String> = (client_bound::cells(&run.rows).into_iter())
        .map(|b| b.cell)
        .collect();
    (run.rows.iter())
        .filter(|r| bound.contains(&crate::report::markdown::cell_name(r)))
        .map(|r| super::input::key_of(r, &opts.ignore))
        .collect()
}

fn judge(
    key: &CellKey,
    dims: &IndexMap<String, String>,
    metric: &Metric,
    base: &[f64],
    cand: &[f64],
    opts: &Options,
) -> Option<MetricChange> {
    let conf = opts.confidence;
    let baseline = Side::of(base, conf)?;
    let candidate = Side::of(cand, conf)?;
    if metric.counted {
        return Some(judge_counted(dims, metric, baseline, candidate, opts));
    }
    let noise = opts.run_noise(metric.name, key);
    let c = change(base, cand, noise.as_ref(), conf);
    let mde = c.map(|c| {
        power::of_change(
            &c,
            conf,
            opts.threshold_pct,
            Regression::of(metric.higher_is_better),
        )
    });
    let mut ch = MetricChange {
        change_pct: c.map(|c| c.pct),
        ci_low_pct: c.map(|c| c.lo_pct),
        ci_high_pct: c.map(|c| c.hi_pct),
        p_value: c.map(|c| c.p),
        log_scale: c.is_some_and(|c| c.log_scale),
        basis: c.map(|c| c.basis),
        noise_runs: c.and_then(|c| c.noise_runs),
        mde_pct: mde.map(|m| m.pct),
        sees_threshold: mde.map(|m| m.sees_threshold),
        ..MetricChange::untested(dims, metric, baseline, candidate)
    };
    ch.verdict = decide(&ch, ch.p_value, opts);
    Some(ch)
}

/// A counted metric's change (`stats::counted`): no test and no power, a verdict from the
/// counted threshold and whether the counts overlap.
fn judge_counted(
    dims: &IndexMap<String, String>,
    metric: &Metric,
    baseline: Side,
    candidate: Side,
    opts: &Options,
) -> MetricChange {
    let c = counted::change(&baseline.values, &candidate.values);
    let verdict = c.map_or(Verdict::CannotTell, |c| {
        counted_verdict(&c, opts.counted_threshold_pct, metric.higher_is_better)
    });
    MetricChange {
        change_pct: c.map(|c| c.pct),
        ci_low_pct: c.map(|c| c.lo_pct),
        ci_high_pct: c.map(|c| c.hi_pct),
        basis: c.map(|_| Basis::Counted),
        verdict,
        ..MetricChange::untested(dims, metric, baseline, candidate)
    }
}

impl MetricChange {
    /// A change of `metric` in the cell `dims` with nothing tested yet: no estimate, cannot
    /// tell.
    fn untested(
        dims: &IndexMap<String, String>,
        metric: &Metric,
        baseline: Side,
        candidate: Side,
    ) -> MetricChange {
        MetricChange {
            cell: cell_name(dims),
            dims: dims.clone(),
            metric: metric.name.into(),
            unit: metric.unit.into(),
            higher_is_better: metric.higher_is_better,
            baseline,
            candidate,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            log_scale: false,
            basis: None,
            noise_runs: None,
            mde_pct: None,
            sees_threshold: None,
            p_adjusted: None,
            verdict: Verdict::CannotTell,
            env_differs: false,
            client_bound: false,
        }
    }
}

/// Under the threshold: unchanged (the same build moves by that much). At or beyond it with
/// counts that do not overlap: improved or regressed. Beyond it with overlapping counts (one
/// side's iterations spread wider than the threshold): cannot tell.
pub(crate) fn counted_verdict(
    c: &counted::CountedChange,
    threshold_pct: f64,
    higher_is_better: bool,
) -> Verdict {
    match (c.pct.abs() >= threshold_pct, c.separated()) {
        (false, _) => Verdict::Unchanged,
        (true, true) if (c.pct > 0.0) == higher_is_better => Verdict::Improved,
        (true, true) => Verdict::Regressed,
        (true, false) => Verdict::CannotTell,
    }
}

/// The verdict of a change from its estimate, interval and the p-value it is judged on.
fn decide(ch: &MetricChange, p: Option<f64>, opts: &Options) -> Verdict {
    let (Some(pct), Some(lo), Some(hi), Some(p)) =
        (ch.change_pct, ch.ci_low_pct, ch.ci_high_pct, p)
    else {
        return Verdict::CannotTell;
    };
    verdict_of(
        pct,
        (lo, hi),
        opts.confidence.significant(p),
        opts.threshold_pct,
        ch.higher_is_better,
    )
}

/// Beyond the threshold and significant: improved or regressed. Inside ±threshold: small
/// when significant (a real change, too small to count), else unchanged. Otherwise the
/// interval straddles the threshold: cannot tell.
pub(crate) fn verdict_of(
    pct: f64,
    (lo, hi): (f64, f64),
    significant: bool,
    threshold_pct: f64,
    higher_is_better: bool,
) -> Verdict {
    let beyond = pct.abs() >= threshold_pct;
    let inside = lo > -threshold_pct && hi < threshold_pct;
    match (significant, beyond, inside) {
        (true, true, _) if (pct > 0.0) == higher_is_better => Verdict::Improved,
        (true, true, _) => Verdict::Regressed,
        (true, false, true) => Verdict::Small,
        (false, _, true) => Verdict::Unchanged,
        _ => Verdict::CannotTell,
    }
}

/// Benjamini-Hochberg over the changes that have a p-value; each verdict is decided again
/// on its adjusted p (the interval stays the per-cell one).
fn adjust_for_fdr(changes: &mut [MetricChange], opts: &Options) {
    let tested: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].p_value.is_some())
        .collect();
    let p: Vec<f64> = tested.iter().filter_map(|&i| changes[i].p_value).collect();
    for (&i, adj) in tested.iter().zip(bh_adjust(&p)) {
        let ch = &mut changes[i];
        ch.p_adjusted = Some(adj);
        ch.verdict = decide(ch, Some(adj), opts);
    }
}

/// Comparisons and changes made by hand, for the unit tests of what reads them.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    fn side(mean: f64) -> Side {
        Side {
            n: 3,
            mean,
            stddev: Some(1.0),
            half_width: Some(1.0),
            values: vec![mean; 3],
        }
    }

    pub(crate) fn change(cell: &str, metric: &str, verdict: Verdict) -> MetricChange {
        MetricChange {
            cell: cell.to_string(),
            dims: IndexMap::new(),
            metric: metric.to_string(),
            unit: String::new(),
            higher_is_better: true,
            baseline: side(100.0),
            candidate: side(100.0),
            change_pct: Some(0.0),
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            log_scale: true,
            basis: None,
            noise_runs: None,
            mde_pct: None,
            sees_threshold: None,
            p_adjusted: None,
            verdict,
            env_differs: false,
            client_bound: false,
        }
    }

    pub(crate) fn empty_comparison() -> Comparison {
        let info = || RunInfo {
            path: String::new(),
            run_id: String::new(),
            started_at: String::new(),
            matrix: String::new(),
        };
        Comparison {
            format_version: 1,
            test: "welch",
            baseline: info(),
            candidate: info(),
            threshold_pct: 5.0,
            counted_threshold_pct: 0.5,
            confidence: 0.95,
            alpha: 0.05,
            noise_runs_read: 0,
            assumed_run_noise_pct: 0.0,
            fdr: false,
            family: family_rate(0, 0.05),
            unprotected: Vec::new(),
            ignored_dimensions: Vec::new(),
            counts: Counts::default(),
            changes: Vec::new(),
            only_in_baseline: Vec::new(),
            only_in_candidate: Vec::new(),
            no_successful_iteration: Vec::new(),
            environment: None,
            client_bound: Vec::new(),
            profiles: Vec::new(),
            counted_profiles: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ResultRow;

    fn run(name: &str, cells: &[(&str, &[f64])]) -> Run {
        let rows = cells
            .iter()
            .flat_map(|(engine, vals)| {
                vals.iter().enumerate().map(move |(i, v)| ResultRow {
                    server: "s".into(),
                    config: "c".into(),
                    engine: engine.to_string(),
                    workload: "w".into(),
                    concurrency: 2,
                    iteration: i as u32 + 1,
                    status: crate::model::Status::Ok,
                    qps: Some(*v),
                    lat_p99_ms: Some(1000.0 / v),
                    ..Default::default()
                })
            })
            .collect();
        Run {
            path: name.into(),
            run_id: name.into(),
            started_at: String::new(),
            report_metric: "qps".into(),
            rows,
            ..Run::default()
        }
    }

    fn opts() -> Options {
        Options {
            threshold_pct: 5.0,
            confidence: Confidence::default(),
            noise: Noise::default(),
            metrics: vec![
                Metric::find("qps").unwrap(),
                Metric::find("lat_p99_ms").unwrap(),
            ],
            ignore: vec![],
            assumed_run_noise_pct: 0.0,
            fdr: false,
            counted_threshold_pct: 0.5,
        }
    }

    #[test]
    fn verdicts_say_what_the_interval_knows() {
        use Verdict::*;
        let v = |pct, lo, hi, sig| verdict_of(pct, (lo, hi), sig, 5.0, true);
        assert_eq!(v(-6.5, -8.2, -4.8, true), Regressed);
        assert_eq!(v(6.5, 4.8, 8.2, true), Improved);
        // Significant yet inside ±5%: small, not unchanged.
        assert_eq!(v(-2.0, -3.0, -1.0, true), Small);
        assert_eq!(v(-0.6, -2.5, 1.3, false), Unchanged);
        // Significant, under the threshold, its interval past it (issue 52: -3.7% [-6.7%,
        // -0.7%]): cannot tell, not unchanged.
        assert_eq!(v(-3.7, -6.7, -0.7, true), CannotTell);
        assert_eq!(v(-5.8, -18.3, 8.7, false), CannotTell);
        assert_eq!(v(-25.6, -51.0, 13.1, false), CannotTell);
        // Lower is better (latency): a significant rise beyond the threshold regressed.
        assert_eq!(verdict_of(8.0, (6.0, 10.0), true, 5.0, false), Regressed);
        assert_eq!(Small.to_string(), "small");
        assert_eq!(CannotTell.to_string(), "cannot tell");
    }

    /// Counted instructions per operation: a 1% rise is flagged, 0.1% is not, whatever
    /// the iterations say; counts that overlap cannot tell; no test, no p-value.
    #[test]
    fn counted_metrics_are_judged_on_the_counted_threshold() {
        let counted = |name: &str, cells: &[(&str, &[f64])]| {
            let mut r = run(name, cells);
            for row in &mut r.rows {
                row.srv_instr_per_op = row.qps;
            }
            r
        };
        let base = counted(
            "a",
            &[
                ("get", &[5025.0, 5027.0, 5024.0]),
                ("set", &[6108.0, 6109.0, 6107.0]),
                ("wide", &[5000.0, 5100.0, 5200.0]),
            ],
        );
        let cand = counted(
            "b",
            &[
                ("get", &[5076.0, 5077.0, 5075.0]),
                ("set", &[6114.0, 6113.0, 6112.0]),
                ("wide", &[5150.0, 5250.0, 5050.0]),
            ],
        );
        let mut o = opts();
        o.metrics = vec![Metric::find("srv_instr_per_op").unwrap()];
        let c = compare(&base, &cand, &o).unwrap();
        let of = |e: &str| {
            (c.changes.iter())
                .find(|ch| ch.dims["engine"] == e)
                .unwrap()
        };
        let get = of("get");
        assert_eq!(get.verdict, Verdict::Regressed, "{get:?}");
        assert_eq!((get.basis, get.p_value), (Some(Basis::Counted), None));
        assert!((get.change_pct.unwrap() - 1.0).abs() < 0.01, "{get:?}");
        assert_eq!(c.threshold_of(get), 0.5);
        assert_eq!(of("set").verdict, Verdict::Unchanged);
        assert_eq!(of("wide").verdict, Verdict::CannotTell);
        // The same counts under a 2% counted threshold: nothing flagged.
        o.counted_threshold_pct = 2.0;
        let c = compare(&base, &cand, &o).unwrap();
        assert_eq!(c.counts.regressed, 0);
        // Counts of two counters are not compared; a run counted by neither has none.
        let (mut by_callgrind, mut by_perf) = (base.clone(), cand.clone());
        by_callgrind.counted_by = "callgrind".into();
        by_perf.counted_by = "perf".into();
        let e = compare(&by_callgrind, &by_perf, &o)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("counted by `callgrind`, the candidate's by `perf`"),
            "{e}"
        );
        assert!(compare(&by_callgrind, &cand, &o).is_ok());
    }

    #[test]
    fn verdicts_follow_direction_threshold_and_noise() {
        let base = run(
            "a",
            &[
                ("slower", &[100.0, 101.0, 99.0, 100.5, 99.5]),
                ("small", &[100.0, 101.0, 99.0, 100.5, 99.5]),
                ("noisy", &[100.0, 130.0, 70.0, 120.0, 80.0]),
                ("faster", &[100.0, 101.0, 99.0, 100.5, 99.5]),
                ("gone", &[1.0, 2.0]),
            ],
        );
        let cand = run(
            "b",
            &[
                ("slower", &[80.0, 81.0, 79.0, 80.5, 79.5]),
                ("small", &[98.0, 99.0, 97.0, 98.5, 97.5]),
                ("noisy", &[90.0, 120.0, 60.0, 110.0, 70.0]),
                ("faster", &[120.0, 121.0, 119.0, 120.5, 119.5]),
                ("new", &[1.0, 2.0]),
            ],
        );
        let c = compare(&base, &cand, &opts()).unwrap();
        let v: Vec<(String, &str, Verdict)> = c
            .changes
            .iter()
            .map(|ch| (ch.dims["engine"].clone(), ch.metric.as_str(), ch.verdict))
            .collect();
        use Verdict::*;
        let want = [
            ("slower", "qps", Regressed),
            ("slower", "lat_p99_ms", Regressed),
            ("small", "qps", Small),
            ("small", "lat_p99_ms", Small),
            ("noisy", "qps", CannotTell),
            ("noisy", "lat_p99_ms", CannotTell),
            ("faster", "qps", Improved),
            ("faster", "lat_p99_ms", Improved),
        ];
        let want: Vec<(String, &str, Verdict)> = want
            .iter()
            .map(|(e, m, v)| (e.to_string(), *m, *v))
            .collect();
        assert_eq!(v, want);
        assert_eq!(c.only_in_baseline, ["s / c / gone / w / c2"]);
        assert_eq!(c.only_in_candidate, ["s / c / new / w / c2"]);
        assert!(c.regressed());
        // numpy: expm1(mean(log b) - mean(log a)) * 100 = -20.001125114622884 (the ratio of
        // geometric means; the arithmetic means give exactly -20%).
        assert!((c.changes[0].change_pct.unwrap() + 20.001125114622884).abs() < 1e-9);
    }

    #[test]
    fn cells_that_only_failed_are_named_not_compared() {
        let base = run("a", &[("x", &[1.0, 2.0]), ("y", &[1.0, 2.0])]);
        let mut cand = run("b", &[("x", &[1.0, 2.0]), ("y", &[1.0, 2.0])]);
        for r in cand.rows.iter_mut().filter(|r| r.engine == "y") {
            r.status = crate::model::Status::Failed;
        }
        let c = compare(&base, &cand, &opts()).unwrap();
        assert_eq!(
            c.no_successful_iteration,
            ["s / c / y / w / c2 (candidate)"]
        );
        assert!(c.only_in_baseline.is_empty() && c.only_in_candidate.is_empty());
        assert!(c.changes.iter().all(|ch| ch.dims["engine"] == "x"));
    }

    #[test]
    fn threshold_parsing_and_empty_join() {
        assert_eq!(parse_threshold("5%").unwrap(), 5.0);
        assert_eq!(parse_threshold(" 2.5 % ").unwrap(), 2.5);
        assert!(parse_threshold("five").is_err());
        let a = run("a", &[("x", &[1.0, 2.0])]);
        let b = run("b", &[("y", &[1.0, 2.0])]);
        assert!(matches!(
            compare(&a, &b, &opts()),
            Err(CompareError::NothingInCommon { .. })
        ));
        let mut o = opts();
        o.ignore = vec!["engine".into()];
        assert_eq!(compare(&a, &b, &o).unwrap().counts.cannot_tell, 2);
    }

    /// The A/A case: two runs of one config, 5 iterations each, 11.5% apart (their
    /// iterations spread by ~4%). On the iterations only that is a regression (exit 4); with
    /// the default assumed run noise of 5% it is not, while a 40% drop still is.
    #[test]
    fn assumed_run_noise_keeps_an_a_a_from_failing_and_still_sees_a_big_drop() {
        let a: &[f64] = &[1000.0, 1040.0, 960.0, 1020.0, 980.0];
        let aa: Vec<f64> = a.iter().map(|v| v * 0.885).collect();
        let big: Vec<f64> = a.iter().map(|v| v * 0.6).collect();
        let base = run("a", &[("aa", a), ("big", a)]);
        let cand = run("b", &[("aa", &aa), ("big", &big)]);
        let mut o = opts();
        o.metrics.truncate(1);
        let verdicts = |o: &Options| -> Vec<Verdict> {
            let c = compare(&base, &cand, o).unwrap();
            c.changes.iter().map(|ch| ch.verdict).collect()
        };
        assert_eq!(verdicts(&o), [Verdict::Regressed, Verdict::Regressed]);
        o.assumed_run_noise_pct = 5.0;
        assert_eq!(verdicts(&o), [Verdict::CannotTell, Verdict::Regressed]);
        let c = compare(&base, &cand, &o).unwrap();
        assert_eq!(c.changes[0].basis, Some(Basis::IterationsAndAssumedRuns));
        // The MDE is the one stats::power gives for this change, and it exceeds 11.5%.
        let mde = c.changes[0].mde_pct.unwrap();
        assert!(mde > 11.5 && mde < 40.0, "{mde}");
        assert_eq!(c.unprotected.len(), 2, "{:?}", c.unprotected);
        assert_eq!(c.family.tests, 2);
        // --assume-run-noise: 0 to below 100 percent.
        assert!(parse_run_noise("100%").is_err() && parse_run_noise("-1").is_err());
        assert_eq!(parse_run_noise("0").unwrap(), 0.0);
    }

    /// `--fdr`: Benjamini-Hochberg over the compare's p-values; a change significant alone
    /// can lose its verdict when many cells are tested.
    #[test]
    fn fdr_judges_on_adjusted_p_values() {
        let a: &[f64] = &[1000.0, 1040.0, 960.0, 1020.0, 980.0];
        let mut cells: Vec<(String, Vec<f64>)> = Vec::new();
        for i in 0..10 {
            let f = if i == 0 { 0.93 } else { 1.0 + 0.001 * i as f64 };
            cells.push((format!("e{i}"), a.iter().map(|v| v * f).collect()));
        }
        let names: Vec<(&str, &[f64])> = cells.iter().map(|(n, _)| (n.as_str(), a)).collect();
        let base = run("a", &names);
        let cand_cells: Vec<(&str, &[f64])> = cells
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let cand = run("b", &cand_cells);
        let mut o = opts();
        o.metrics.truncate(1);
        let c = compare(&base, &cand, &o).unwrap();
        let p = c.changes[0].p_value.unwrap();
        assert!(
            p < 0.05 && c.changes[0].verdict == Verdict::Regressed,
            "p {p}"
        );
        o.fdr = true;
        let c = compare(&base, &cand, &o).unwrap();
        let adj = c.changes[0].p_adjusted.unwrap();
        // The smallest of 10 p-values (the others near 1): adjusted to 10 p, no longer < 0.05.
        assert!((adj - p * 10.0).abs() < 1e-12, "p {p} adj {adj}");
        assert!(
            adj >= 0.05 && c.changes[0].verdict == Verdict::CannotTell,
            "{adj}"
        );
        assert!(c.fdr && c.changes.iter().all(|ch| ch.p_adjusted.is_some()));
    }
}
