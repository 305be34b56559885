//! Batches of rounds, looked at after each: the first batch measures every cell (or the
//! caller's `--only`); while the look leaves some cells open, another batch measures just
//! those, within the plan's most rounds and time budget. Each look is judged at the level the
//! spending of the error rate leaves it (`stats::spending`). `rmatrix ab` and the bisect scan
//! share this loop; what a look judges is theirs.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use indexmap::IndexMap;

use super::judge;
use super::report::Batch;
use super::Plan;
use crate::compare::{input, CompareError};
use crate::matrix::LoadedMatrix;
use crate::stats::{spending, Confidence};

/// A cell's dimensions without its server.
pub(crate) type Dims = IndexMap<String, String>;

/// Where the batches go and who they are for: `root/sub/batch-K`, progress lines prefixed
/// by `who`.
pub(crate) struct Place<'a> {
    pub(crate) root: &'a Path,
    pub(crate) sub: &'a str,
    pub(crate) who: &'a str,
}

/// The batches as reported, and why no more rounds were added while some cell was open
/// (empty when none was).
pub(crate) struct Batched {
    pub(crate) batches: Vec<Batch>,
    pub(crate) stopped: String,
}

/// Measure batches of `derive(batch, rounds)` until `look` (over every batch so far, at the
/// spent level, with the cells the last batch measured, None for the first) leaves no cell
/// open. None when the first batch had no successful cell.
pub(crate) async fn in_batches<D, L>(
    plan: &Plan,
    place: &Place<'_>,
    only: &[String],
    derive: D,
    mut look: L,
) -> Result<Option<Batched>>
where
    D: Fn(u64, u32) -> Result<LoadedMatrix>,
    L: FnMut(&[(u32, input::Run)], Confidence, Option<&[Dims]>) -> Option<Vec<Dims>>,
{
    let start = Instant::now();
    let mut runs: Vec<(u32, input::Run)> = Vec::new();
    let mut batches: Vec<Batch> = Vec::new();
    let mut measuring: Option<Vec<Dims>> = None;
    let (mut count, mut done) = (plan.rounds, 0);
    let stopped = loop {
        let k = runs.len() + 1;
        let only_now = match &measuring {
            None => only.to_vec(),
            Some(cells) => crate::compare::rerun::only_args(cells.iter()),
        };
        std::fs::create_dir_all(place.root.join(place.sub))?;
        let out = place.root.join(place.sub).join(format!("batch-{k}"));
        let began = Instant::now();
        if let Err(e) = measure(derive(k as u64 - 1, count)?, &out, &only_now).await {
            // A first batch that never started (no engine) leaves nothing behind to block
            // the retry.
            if runs.is_empty() && !out.exists() {
                let _ = std::fs::remove_dir_all(place.root);
            }
            return Err(e);
        }
        let seconds = began.elapsed().as_secs_f64();
        let run = match input::load_run(&out) {
            Ok(run) => run,
            Err(CompareError::NoResults { .. }) if runs.is_empty() => return Ok(None),
            Err(CompareError::NoResults { .. }) => {
                break format!("batch {k} had no successful cell")
            }
            Err(e) => return Err(e.into()),
        };
        let measured = cells_in(&run);
        let conf = spending::look(plan.conf, done, done + count, plan.max_rounds);
        batches.push(Batch {
            run: format!("{}/batch-{k}", place.sub),
            rounds: count,
            only: only_now,
            seconds,
            confidence: conf.level(),
        });
        runs.push((done, run));
        done += count;
        let Some(open) = look(&runs, conf, measuring.as_deref()) else {
            break String::new();
        };
        let left = plan.max_rounds.saturating_sub(done);
        if left == 0 {
            break format!("the cells reached --max-rounds ({})", plan.max_rounds);
        }
        let next = plan.rounds.min(left);
        // The next batch's time, from this one's per round and per cell it measured.
        let per = seconds / count as f64 / measured.max(1) as f64;
        let estimate = per * next as f64 * open.len() as f64;
        if let Some((budget, text)) = &plan.budget {
            if start.elapsed().as_secs_f64() + estimate > budget.as_secs_f64() {
                break format!(
                    "another {next} rounds (about {estimate:.0} s) would overrun --budget {text}"
                );
            }
        }
        eprintln!(
            "{}: {} cell(s) cannot tell yet after {done} rounds: {next} more rounds",
            place.who,
            open.len()
        );
        measuring = Some(open);
        count = next;
    };
    Ok(Some(Batched { batches, stopped }))
}

/// `stored` as a look left it: all of `looked` the first time (or after a batch of every
/// cell), else only the cells it measured; the others keep the verdicts of the last look
/// they were measured in.
pub(crate) fn update(
    stored: &mut Vec<judge::CellChange>,
    looked: Vec<judge::CellChange>,
    measured: Option<&[Dims]>,
) {
    match (stored.is_empty(), measured) {
        (true, _) | (_, None) => *stored = looked,
        (false, Some(cells)) => {
            for new in looked.into_iter().filter(|c| cells.contains(&c.dims)) {
                if let Some(old) =
                    (stored.iter_mut()).find(|c| c.dims == new.dims && c.metric == new.metric)
                {
                    *old = new;
                }
            }
        }
    }
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
