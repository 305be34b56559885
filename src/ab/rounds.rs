//! Two sides measured in batches of rounds until every cell can tell (`batches`): the first
//! batch measures every cell; while some cell's interval still straddles the threshold,
//! another batch measures just those cells. The rounds of every batch are pooled (`judge`),
//! and a cell keeps the verdict of the last look it was measured in, so that looking again
//! until a cell tells raises no false alarms.

use std::path::Path;

use anyhow::Result;

use super::batches::{self, Dims, Place};
use super::derive::{self, Rounds, Side};
use super::judge::{self, CellChange};
use super::report::Batch;
use super::Plan;
use crate::compare::join::Verdict;
use crate::matrix::LoadedMatrix;

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
        duet: plan.duet.clone(),
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
    // Every cell and metric as its last look judged it.
    let mut changes: Vec<CellChange> = Vec::new();
    let derive = |batch, count| {
        let layout = layout(plan, batch, count);
        derive::derive(sides.loaded, sides.server, (sides.a, sides.b), layout)
    };
    let look = |runs: &[_], conf, measured: Option<&[Dims]>| {
        let pooled = judge::Pooled::new(
            runs,
            (&names.0, &names.1),
            &plan.metrics,
            plan.duet.is_some(),
        );
        let looked = pooled.judge(&plan.metrics, plan.threshold_pct, conf);
        batches::update(&mut changes, looked, measured);
        let open = open_cells(&changes);
        (!open.is_empty()).then_some(open)
    };
    let place = Place {
        root: dir,
        sub: "runs",
        who,
    };
    let Some(batched) = batches::in_batches(plan, &place, only, derive, look).await? else {
        return Ok(None);
    };
    Ok(Some(Outcome {
        changes,
        batches: batched.batches,
        stopped: batched.stopped,
    }))
}

/// The cells (their dimensions, without the server) that cannot tell yet, each once.
fn open_cells(changes: &[CellChange]) -> Vec<Dims> {
    let mut out: Vec<Dims> = Vec::new();
    for c in changes {
        // A cell whose rounds were set aside as uneven may tell with more.
        let measured = c.rounds + c.uneven_rounds.len();
        if c.verdict == Verdict::CannotTell && measured >= 2 && !out.contains(&c.dims) {
            out.push(c.dims.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::join::Verdict;

    fn change(workload: &str, metric: &str, verdict: Verdict, confidence: f64) -> CellChange {
        CellChange {
            metric: metric.into(),
            confidence,
            ..CellChange::of_test(workload, verdict)
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
        batches::update(&mut changes, looked, Some(&[set]));
        assert_eq!(changes[0].verdict, Verdict::Regressed);
        assert_eq!(changes[0].confidence, 0.982);
        assert_eq!(changes[1].verdict, Verdict::Unchanged);
        assert_eq!(changes[1].confidence, 0.987);
    }
}
