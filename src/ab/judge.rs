//! Each cell of an A/B judged on its rounds: the two sides of a round ran back to back on the
//! same host, so the change is judged on the per-round ratios B / A (`stats::paired_change`:
//! Hodges-Lehmann with the signed-rank interval, the paired mean beside it), pooled over
//! every batch of rounds the cell ran in. The verdict is compare's (`join::verdict_of`).
//! In a duet, rounds whose sides got unequal CPU are set aside first (`stats::uneven`).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::Serialize;

use crate::compare::input::{self, Run};
use crate::compare::join::{verdict_of, Verdict};
use crate::model::metric::Metric;
use crate::model::{CellKey, Dimension};
use crate::stats::jumps::jumped_rounds;
use crate::stats::paired_change::paired_change;
use crate::stats::power::{self, Regression};
use crate::stats::uneven::uneven_rounds;
use crate::stats::{Basis, Confidence};

/// One round of one cell: its number over all batches, A's and B's value, the higher of
/// their host CPU pressures and each side's server CPU share (CPU seconds per second).
#[derive(Debug, Clone, Copy, Default)]
struct Round {
    a: Option<f64>,
    b: Option<f64>,
    pressure: Option<f64>,
    share: [Option<f64>; 2],
}

impl Round {
    /// ln(B's server CPU share / A's), when both are known.
    fn split(&self) -> Option<f64> {
        let [a, b] = self.share;
        Some((b? / a?).ln()).filter(|s| s.is_finite())
    }
}

/// The judged change of one cell and metric, B against A.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CellChange {
    /// The cell without its server (`plain / get / c4`).
    pub(crate) cell: String,
    pub(crate) dims: IndexMap<String, String>,
    pub(crate) metric: String,
    pub(crate) unit: String,
    pub(crate) higher_is_better: bool,
    /// Rounds in which both sides succeeded and got even CPU (what the change rests on).
    pub(crate) rounds: usize,
    /// Medians of each side's values over those rounds.
    pub(crate) a_median: Option<f64>,
    pub(crate) b_median: Option<f64>,
    /// B against A in percent, with its interval (Hodges-Lehmann, or the paired mean under 6
    /// rounds: `basis` says which).
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci_low_pct: Option<f64>,
    pub(crate) ci_high_pct: Option<f64>,
    pub(crate) p_value: Option<f64>,
    pub(crate) basis: Option<Basis>,
    /// The paired mean's change and interval beside the Hodges-Lehmann one.
    pub(crate) mean_pct: Option<f64>,
    pub(crate) mean_low_pct: Option<f64>,
    pub(crate) mean_high_pct: Option<f64>,
    /// The smallest regression these rounds detect 80% of the time.
    pub(crate) mde_pct: Option<f64>,
    /// The level of the interval and the verdict: that of the cell's last look
    /// (`stats::spending`).
    pub(crate) confidence: f64,
    pub(crate) verdict: Verdict,
    /// Rounds whose host pressure jumped (`stats::jumps`): read the change with care.
    pub(crate) jumped_rounds: Vec<u32>,
    /// Duet rounds set aside: their sides got unequal CPU (`stats::uneven`).
    pub(crate) uneven_rounds: Vec<u32>,
    /// A control cell (`--control`): one the change cannot touch, which must not move.
    pub(crate) control: bool,
}

/// Rounds per cell (without its server) and metric over every batch; the key keeps the
/// cell's first appearance order.
pub(crate) struct Pooled {
    cells: IndexMap<CellKey, IndexMap<String, String>>,
    rounds: BTreeMap<(CellKey, &'static str), BTreeMap<u32, Round>>,
    /// The sides ran at once (a duet): rounds whose sides got unequal CPU are set aside.
    duet: bool,
}

const WITHOUT_SERVER: [Dimension; 5] = [
    Dimension::Config,
    Dimension::Engine,
    Dimension::Workload,
    Dimension::Concurrency,
    Dimension::Rate,
];

/// A row's cell without its server: the key both sides share.
pub(crate) fn key_without_server(r: &crate::results::ResultRow) -> CellKey {
    CellKey::over(WITHOUT_SERVER, |d| r.dim(d))
}

impl Pooled {
    /// The batches' rows: each batch's iteration `i` is round `first + i` where `first` is
    /// the number of rounds the batches before it had.
    pub(crate) fn new(
        batches: &[(u32, Run)],
        (a, b): (&str, &str),
        metrics: &[&'static Metric],
        duet: bool,
    ) -> Pooled {
        let mut cells = IndexMap::new();
        let mut rounds: BTreeMap<(CellKey, &'static str), BTreeMap<u32, Round>> = BTreeMap::new();
        for (first, run) in batches {
            for r in &run.rows {
                let is_a = r.server == a;
                if !is_a && r.server != b {
                    continue;
                }
                let key = key_without_server(r);
                cells.entry(key.clone()).or_insert_with(|| {
                    WITHOUT_SERVER
                        .iter()
                        .map(|d| (d.to_string(), r.dim(*d)))
                        .collect()
                });
                if !r.is_ok() {
                    continue;
                }
                for m in metrics {
                    let Some(v) = m.value(r).filter(|v| v.is_finite() && *v > 0.0) else {
                        continue;
                    };
                    let round = (rounds.entry((key.clone(), m.name)).or_default())
                        .entry(first + r.iteration)
                        .or_default();
                    match is_a {
                        true => round.a = Some(v),
                        false => round.b = Some(v),
                    }
                    round.share[usize::from(!is_a)] = r
                        .srv_cpu_s
                        .zip(r.seconds.filter(|s| *s > 0.0))
                        .map(|(cpu, s)| cpu / s);
                    round.pressure = [round.pressure, r.host_cpu_pressure_pct]
                        .into_iter()
                        .flatten()
                        .reduce(f64::max);
                }
            }
        }
        Pooled {
            cells,
            rounds,
            duet,
        }
    }

    /// Every cell and metric judged, in the cells' order then the metrics'.
    pub(crate) fn judge(
        &self,
        metrics: &[&'static Metric],
        threshold_pct: f64,
        conf: Confidence,
    ) -> Vec<CellChange> {
        let mut out = Vec::new();
        for (key, dims) in &self.cells {
            for m in metrics {
                let rounds = self.rounds.get(&(key.clone(), m.name));
                let rounds: Vec<(&u32, &Round)> =
                    rounds.map(|r| r.iter().collect()).unwrap_or_default();
                let uneven = match self.duet {
                    true => uneven_of(&rounds),
                    false => Vec::new(),
                };
                out.push(judge_cell(dims, m, &rounds, &uneven, threshold_pct, conf));
            }
        }
        out
    }
}

/// The rounds, of those both sides measured, whose sides got unequal CPU.
fn uneven_of(rounds: &[(&u32, &Round)]) -> Vec<u32> {
    let splits: Vec<(u32, f64)> = (rounds.iter())
        .filter(|(_, r)| r.a.is_some() && r.b.is_some())
        .filter_map(|(n, r)| Some((**n, r.split()?)))
        .collect();
    uneven_rounds(&splits)
}

fn judge_cell(
    dims: &IndexMap<String, String>,
    m: &Metric,
    rounds: &[(&u32, &Round)],
    uneven: &[u32],
    threshold_pct: f64,
    conf: Confidence,
) -> CellChange {
    let both: Vec<(u32, f64, f64, Option<f64>)> = rounds
        .iter()
        .filter(|(n, _)| !uneven.contains(n))
        .filter_map(|(n, r)| Some((**n, r.a?, r.b?, r.pressure)))
        .collect();
    let pairs: Vec<(f64, f64)> = both.iter().map(|x| (x.1, x.2)).collect();
    let pc = paired_change(&pairs, conf);
    let c = pc.and_then(|p| p.change());
    let mean = pc.and_then(|p| p.mean);
    let pct = |x: f64| x.exp_m1() * 100.0;
    let verdict = match c {
        Some(c) => verdict_of(
            c.pct,
            (c.lo_pct, c.hi_pct),
            conf.significant(c.p),
            threshold_pct,
            m.higher_is_better,
        ),
        None => Verdict::CannotTell,
    };
    let pressure: Vec<(u32, f64)> = (both.iter()).filter_map(|x| Some((x.0, x.3?))).collect();
    let median = |v: Vec<f64>| {
        let mut v = v;
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| crate::stats::located::median_sorted(&v))
    };
    CellChange {
        cell: input::cell_name(dims),
        dims: dims.clone(),
        metric: m.name.into(),
        unit: m.unit.into(),
        higher_is_better: m.higher_is_better,
        rounds: pairs.len(),
        a_median: median(pairs.iter().map(|p| p.0).collect()),
        b_median: median(pairs.iter().map(|p| p.1).collect()),
        change_pct: c.map(|c| c.pct),
        ci_low_pct: c.map(|c| c.lo_pct),
        ci_high_pct: c.map(|c| c.hi_pct),
        p_value: c.map(|c| c.p),
        basis: c.map(|c| c.basis),
        mean_pct: mean.map(|l| pct(l.estimate)),
        mean_low_pct: mean.and_then(|l| l.low).map(pct),
        mean_high_pct: mean.and_then(|l| l.high).map(pct),
        mde_pct: c.map(|c| {
            power::of_change(&c, conf, threshold_pct, Regression::of(m.higher_is_better)).pct
        }),
        confidence: conf.level(),
        verdict,
        jumped_rounds: jumped_rounds(&pressure),
        uneven_rounds: uneven.to_vec(),
        control: false,
    }
}

#[cfg(test)]
impl CellChange {
    /// A `qps` change of one workload's cell with this verdict, at 95% over 6 rounds and with
    /// no numbers: tests set what they judge with struct update syntax.
    pub(crate) fn of_test(workload: &str, verdict: Verdict) -> Self {
        CellChange {
            cell: workload.into(),
            dims: [("workload".to_string(), workload.to_string())]
                .into_iter()
                .collect(),
            metric: "qps".into(),
            unit: "queries/s".into(),
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
            confidence: 0.95,
            verdict,
            jumped_rounds: Vec::new(),
            uneven_rounds: Vec::new(),
            control: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired_change::tests::{BASE, CAND};

    fn round(a: f64, b: f64) -> Round {
        Round {
            a: Some(a),
            b: Some(b),
            pressure: Some(1.0),
            share: [Some(0.4), Some(0.4)],
        }
    }

    fn judged(base: &[f64], cand: &[f64], threshold: f64) -> CellChange {
        let rounds: Vec<(u32, Round)> = (1..)
            .zip(base.iter().zip(cand))
            .map(|(n, (a, b))| (n, round(*a, *b)))
            .collect();
        let refs: Vec<(&u32, &Round)> = rounds.iter().map(|(n, r)| (n, r)).collect();
        let qps = Metric::find("qps").unwrap();
        judge_cell(
            &IndexMap::new(),
            qps,
            &refs,
            &[],
            threshold,
            Confidence::default(),
        )
    }

    /// tests/ref/paired_intervals.py, "12 rounds": Hodges-Lehmann -0.04972 [-0.05466,
    /// -0.04337] (p = 0.034) and mean -0.03402 on the logs, the wild round 7 notwithstanding.
    #[test]
    fn a_cell_is_judged_on_its_rounds_ratios() {
        let c = judged(&BASE, &CAND, 5.0);
        assert_eq!(c.rounds, 12);
        assert_eq!(c.basis, Some(Basis::PairedHodgesLehmann));
        let pct = |x: f64| x.exp_m1() * 100.0;
        assert!(
            (c.change_pct.unwrap() - pct(-0.04972)).abs() < 0.01,
            "{c:?}"
        );
        assert!(
            (c.ci_low_pct.unwrap() - pct(-0.05466)).abs() < 0.01,
            "{c:?}"
        );
        assert!(
            (c.ci_high_pct.unwrap() - pct(-0.04337)).abs() < 0.01,
            "{c:?}"
        );
        assert!((c.mean_pct.unwrap() - pct(-0.03402)).abs() < 0.01, "{c:?}");
        assert!((c.p_value.unwrap() - 0.034).abs() < 0.001, "{c:?}");
        // -4.9% reaches past -5% at its low end: cannot tell at 5%, small at 6%, regressed at
        // 4%.
        assert_eq!(c.verdict, Verdict::CannotTell);
        assert_eq!(judged(&BASE, &CAND, 6.0).verdict, Verdict::Small);
        assert_eq!(judged(&BASE, &CAND, 4.0).verdict, Verdict::Regressed);
        assert!(c.mde_pct.is_some());
    }

    /// Beside a build, a duet's rounds in which one side had its CPU to itself run twice as
    /// fast on that side: set aside, the rest tell the planted +7%.
    #[test]
    fn a_duet_sets_aside_the_rounds_whose_sides_got_unequal_cpu() {
        let mut rounds: Vec<(u32, Round)> = (1..=12)
            .map(|n| (n, round(100.0, 107.0 + f64::from(n % 3) * 0.5)))
            .collect();
        for (n, r) in rounds.iter_mut().filter(|(n, _)| n % 4 == 0) {
            // One side alone on its CPU: 30% faster, and its server got more of it.
            let (fast, slow) = match n.is_multiple_of(8) {
                true => (0, 1),
                false => (1, 0),
            };
            let v = [r.a.unwrap(), r.b.unwrap()];
            let mut out = v;
            out[fast] = v[fast] * 1.3;
            [r.a, r.b] = [Some(out[0]), Some(out[1])];
            r.share[fast] = Some(0.52);
            r.share[slow] = Some(0.40);
        }
        let refs: Vec<(&u32, &Round)> = rounds.iter().map(|(n, r)| (n, r)).collect();
        assert_eq!(uneven_of(&refs), vec![4, 8, 12]);
        let qps = Metric::find("qps").unwrap();
        let c = judge_cell(
            &IndexMap::new(),
            qps,
            &refs,
            &[4, 8, 12],
            2.0,
            Confidence::default(),
        );
        assert_eq!((c.rounds, c.uneven_rounds.clone()), (9, vec![4, 8, 12]));
        assert!((c.change_pct.unwrap() - 7.5).abs() < 0.6, "{c:?}");
        assert!(c.ci_low_pct.unwrap() > 6.5, "{c:?}");
    }

    #[test]
    fn a_cell_without_two_rounds_cannot_tell() {
        let c = judged(&[100.0], &[50.0], 5.0);
        assert_eq!(c.verdict, Verdict::CannotTell);
        assert_eq!(c.change_pct, None);
    }
}
