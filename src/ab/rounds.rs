//! Two sides measured in batches of rounds until every cell can tell: the first batch
//! measures every cell; while some cell's interval still straddles the threshold, another
//! batch measures just those cells, within the plan's most rounds and time budget. The rounds
//! of every batch are pooled (`judge`). Each look is judged at the level the spending of the
//! error rate leaves it (`stats::spending`), and a cell keeps the verdict of the last look
//! it was measured in, so that looking again until a cell tells raises no false alarms.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indexmap::IndexMap;

use super::derive::{self, Rounds, Side};
use super::judge::{self, CellChange};
use super::report::Batch;
use super::Plan;
use crate::compare::join::Verdict;
use crate::compare::{input, CompareError};
use crate::matrix::LoadedMatrix;
use crate::stats::spending;

/// What is measured: the matrix, the server and its two sides.
pub(crate) struct Sides<'a> {
    pub(crate) loaded: &'a LoadedMatrix,
    pub(crate) server: &'a str,
    pub(crate) a: &'a Side,
    pub(crate) b: &'a Side,
}

/// Every cell judged over the rounds of every batch, the batches, and why no more rounds
/// were added while some cell could not tell (empty otherwise).
pub(crate) struct Outcome {
    pub(crate) changes: Vec<CellChange>,
    pub(crate) batches: Vec<Batch>,
    pub(crate) stopped: String,
}

/// The rounds of batch `batch` (0 the first): its own seed, so batches differ in order.
pub(crate) fn layout(plan: &Plan, batch: u64, count: u32) -> Rounds {
    Rounds {
        count,
        order: plan.order,
        seed: plan.seed.wrapping_add(batch),
    }
}

/// Measure `sides` into `dir/runs/batch-N` (`only`: the cells of the first batch); None when
/// the first batch had no successful cell. `who` prefixes the progress lines.
pub(crate) async fn side_by_side(
    sides: &Sides<'_>,
    plan: &Plan,
    dir: &Path,
    only: &[String],
    who: &str,
) -> Result<Option<Outcome>> {
    let names = derive::side_names(sides.server);
    let start = Instant::now();
    let mut batches: Vec<(u32, input::Run)> = Vec::new();
    let mut done_batches: Vec<Batch> = Vec::new();
    let mut only = only.to_vec();
    let mut open_before: Vec<IndexMap<String, String>> = Vec::new();
    let mut count = plan.rounds;
    let mut done = 0;
    let judge_all = |batches: &[(u32, input::Run)], conf| {
        judge::Pooled::new(batches, (&names.0, &names.1), &plan.metrics).judge(
            &plan.metrics,
            plan.threshold_pct,
            conf,
        )
    };
    // Every cell and metric as its last look judged it.
    let mut changes: Vec<CellChange> = Vec::new();
    loop {
        let k = batches.len() + 1;
        let layout = layout(plan, k as u64 - 1, count);
        let derived = derive::derive(sides.loaded, sides.server, (sides.a, sides.b), layout)?;
        let out = dir.join("runs").join(format!("batch-{k}"));
        std::fs::create_dir_all(dir.join("runs"))?;
        let began = Instant::now();
        if let Err(e) = measure(derived, &out, &only).await {
            // A first batch that never started (no engine) leaves nothing behind to block
            // the retry.
            if batches.is_empty() && !out.exists() {
                let _ = std::fs::remove_dir_all(dir);
            }
            return Err(e);
        }
        let seconds = began.elapsed().as_secs_f64();
        let run = match input::load_run(&out) {
            Ok(run) => run,
            Err(CompareError::NoResults { .. }) if batches.is_empty() => return Ok(None),
            Err(CompareError::NoResults { .. }) => {
                return Ok(Some(Outcome {
                    changes,
                    batches: done_batches,
                    stopped: format!("batch {k} had no successful cell"),
                }))
            }
            Err(e) => return Err(e.into()),
        };
        let measured = cells_in(&run);
        let conf = spending::look(plan.conf, done, done + count, plan.max_rounds);
        done_batches.push(Batch {
            run: format!("runs/batch-{k}"),
            rounds: count,
            only: only.clone(),
            seconds,
            confidence: conf.level(),
        });
        batches.push((done, run));
        done += count;
        let looked = judge_all(&batches, conf);
        match changes.is_empty() {
            true => changes = looked,
            false => relook(&mut changes, looked, &open_before),
        }
        let open = open_cells(&changes);
        let finish = |stopped: String| Outcome {
            changes: changes.clone(),
            batches: done_batches.clone(),
            stopped,
        };
        if open.is_empty() {
            return Ok(Some(finish(String::new())));
        }
        let left = plan.max_rounds.saturating_sub(done);
        if left == 0 {
            let why = format!("the cells reached --max-rounds ({})", plan.max_rounds);
            return Ok(Some(finish(why)));
        }
        let next = plan.rounds.min(left);
        // The next batch's time, from this one's per round and per cell it measured.
        let per = seconds / count as f64 / measured.max(1) as f64;
        let estimate = per * next as f64 * open.len() as f64;
        if let Some((budget, text)) = &plan.budget {
            if start.elapsed().as_secs_f64() + estimate > budget.as_secs_f64() {
                let why = format!(
                    "another {next} rounds (about {estimate:.0} s) would overrun --budget {text}"
                );
                return Ok(Some(finish(why)));
            }
        }
        eprintln!(
            "{who}: {} cell(s) cannot tell yet: {next} more rounds",
            open.len()
        );
        only = crate::compare::rerun::only_args(open.iter());
        open_before = open;
        count = next;
    }
}

/// The cells this look measured (`measured`) take its verdicts; the others keep theirs.
pub(crate) fn relook(
    changes: &mut [CellChange],
    looked: Vec<CellChange>,
    measured: &[IndexMap<String, String>],
) {
    for new in looked.into_iter().filter(|c| measured.contains(&c.dims)) {
        if let Some(old) =
            (changes.iter_mut()).find(|c| c.dims == new.dims && c.metric == new.metric)
        {
            *old = new;
        }
    }
}

/// The cells (their dimensions, without the server) that cannot tell yet, each once.
fn open_cells(changes: &[CellChange]) -> Vec<IndexMap<String, String>> {
    let mut out: Vec<IndexMap<String, String>> = Vec::new();
    for c in changes {
        if c.verdict == Verdict::CannotTell && c.rounds >= 2 && !out.contains(&c.dims) {
            out.push(c.dims.clone());
        }
    }
    out
}

/// How many cells (without the server) a batch measured.
fn cells_in(run: &input::Run) -> usize {
    let keys: std::collections::BTreeSet<_> =
        run.rows.iter().map(judge::key_without_server).collect();
    keys.len()
}

async fn measure(loaded: LoadedMatrix, out: &Path, only: &[String]) -> Result<()> {
    crate::run::run(crate::run::RunOptions::quiet_into(loaded, out, only)?).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::join::Verdict;

    fn change(workload: &str, metric: &str, verdict: Verdict, confidence: f64) -> CellChange {
        let dims: IndexMap<String, String> = [("workload".to_string(), workload.to_string())]
            .into_iter()
            .collect();
        CellChange {
            cell: workload.into(),
            dims,
            metric: metric.into(),
            unit: String::new(),
            higher_is_better: true,
            rounds: 6,
            a_median: None,
            b_median: None,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            basis: None,
            mean_pct: None,
            mean_low_pct: None,
            mean_high_pct: None,
            mde_pct: None,
            confidence,
            verdict,
            jumped_rounds: Vec::new(),
            control: false,
        }
    }

    /// A cell told at the first look keeps that verdict: a later look, at another level over
    /// the same rounds, does not judge it again.
    #[test]
    fn a_look_judges_only_the_cells_it_measured() {
        let mut changes = vec![
            change("get", "qps", Verdict::Regressed, 0.982),
            change("set", "qps", Verdict::CannotTell, 0.982),
        ];
        let looked = vec![
            change("get", "qps", Verdict::CannotTell, 0.987),
            change("set", "qps", Verdict::Unchanged, 0.987),
        ];
        let set = changes[1].dims.clone();
        relook(&mut changes, looked, &[set]);
        assert_eq!(changes[0].verdict, Verdict::Regressed);
        assert_eq!(changes[0].confidence, 0.982);
        assert_eq!(changes[1].verdict, Verdict::Unchanged);
        assert_eq!(changes[1].confidence, 0.987);
    }
}
