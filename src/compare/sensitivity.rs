//! Before a run: what each planned cell's compare would see (`rmatrix plan --noise-from`).
//!
//! From earlier runs of the cells: their iterations' spread (pooled over the runs) and their
//! run effect (`stats::RunNoise`, else the assumed one), the smallest regression a compare of
//! two runs with the matrix's iterations flags with 80% power (`stats::power`), and, for a
//! target, the iterations per cell that reach it.

use super::noise::Noise;
use crate::model::metric::Metric;
use crate::model::CellKey;
use crate::stats::power::{mde_log, planned_se, Mde, Regression};
use crate::stats::{Confidence, RunNoise};

/// More iterations than this are not suggested: past it, lengthen iterations or quiet the
/// machine.
pub(crate) const MAX_ITERATIONS: usize = 200;

#[derive(Debug, Clone)]
pub(crate) struct PlanPower {
    pub(crate) threshold_pct: f64,
    pub(crate) confidence: Confidence,
    pub(crate) assumed_run_noise_pct: f64,
    pub(crate) iterations: usize,
    /// Above the threshold (checked by the caller).
    pub(crate) target_pct: Option<f64>,
}

/// What the store says about one planned cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CellPower {
    pub(crate) cell: String,
    /// Runs of the store that have the cell.
    pub(crate) runs: usize,
    /// CV of the iterations (percent), pooled over those runs.
    pub(crate) iteration_cv_pct: f64,
    /// CV of run means (percent), and whether it was learned (3+ runs) or assumed.
    pub(crate) run_cv_pct: f64,
    pub(crate) run_learned: bool,
    pub(crate) mde: Mde,
    /// For a target: the iterations needed, or None when no count up to [`MAX_ITERATIONS`]
    /// reaches it (the run noise does not shrink with iterations); `floor_pct` is the
    /// smallest MDE any of them gives.
    pub(crate) needed: Option<usize>,
    pub(crate) floor_pct: f64,
}

fn cv_pct(log_var: f64) -> f64 {
    log_var.exp_m1().max(0.0).sqrt() * 100.0
}

/// The cells with earlier runs of `metric`; cells the store lacks are left out (the caller
/// names them).
pub(crate) fn plan_power(
    cells: &[(CellKey, String)],
    metric: &Metric,
    noise: &Noise,
    opts: &PlanPower,
) -> Vec<CellPower> {
    let dir = Regression::of(metric.higher_is_better);
    let mde_at = |n: usize, iter: (f64, f64), run: (f64, f64)| {
        let (se, df) = planned_se(n, iter, run);
        mde_log(se, df, opts.confidence, opts.threshold_pct, dir)
    };
    let mut out = Vec::new();
    for (key, name) in cells {
        let Some(it) = noise.iterations(metric.name, key) else {
            continue;
        };
        let learned = noise.get(metric.name, key).copied();
        let run = learned.unwrap_or_else(|| RunNoise::assumed(opts.assumed_run_noise_pct));
        let iter = (it.var, it.df);
        let run_terms = (run.run_var, run.df);
        // Not monotone: with few noise runs, the run term's degrees of freedom dominate as
        // iterations grow, so the best MDE can come before MAX_ITERATIONS.
        let by_n: Vec<f64> = (2..=MAX_ITERATIONS)
            .map(|n| mde_at(n, iter, run_terms).pct)
            .collect();
        let needed = (opts.target_pct)
            .and_then(|target| by_n.iter().position(|m| *m <= target).map(|i| i + 2));
        out.push(CellPower {
            cell: name.clone(),
            runs: it.runs,
            iteration_cv_pct: cv_pct(it.var),
            run_cv_pct: cv_pct(run.run_var),
            run_learned: learned.is_some(),
            mde: mde_at(opts.iterations, iter, run_terms),
            needed,
            floor_pct: by_n.iter().copied().fold(f64::INFINITY, f64::min),
        });
    }
    out
}

/// The plan's power section: unprotected cells first, then one line per cell.
pub(crate) fn render(
    rows: &[CellPower],
    missing: &[String],
    metric: &Metric,
    opts: &PlanPower,
) -> String {
    let mut out = format!(
        "\nDetection power of `compare` ({metric}, {} iterations a side, {} confidence, \
         threshold {}%, 80% power):\n",
        opts.iterations,
        opts.confidence,
        opts.threshold_pct,
        metric = metric.name,
    );
    let unprotected: Vec<&CellPower> = rows.iter().filter(|r| !r.mde.sees_threshold).collect();
    if !unprotected.is_empty() {
        out.push_str(&format!(
            "Unprotected: {} of {} cells cannot see the {}% threshold:\n",
            unprotected.len(),
            rows.len(),
            opts.threshold_pct
        ));
        for r in &unprotected {
            out.push_str(&format!("  {} (sees {:.1}% or more)\n", r.cell, r.mde.pct));
        }
    }
    for r in rows {
        out.push_str(&format!(
            "  {}: sees {} of {:.1}% or more (iterations CV {:.1}% over {} runs, run noise \
             {:.1}% {})",
            r.cell,
            if metric.higher_is_better {
                "drops"
            } else {
                "rises"
            },
            r.mde.pct,
            r.iteration_cv_pct,
            r.runs,
            r.run_cv_pct,
            if r.run_learned { "learned" } else { "assumed" },
        ));
        if let Some(target) = opts.target_pct {
            match r.needed {
                Some(n) => out.push_str(&format!("; {target}% needs {n} iterations")),
                None => out.push_str(&format!(
                    "; {target}% is out of reach by iterations (at best {:.1}% up to \
                     {MAX_ITERATIONS}: the run noise does not shrink with them)",
                    r.floor_pct
                )),
            }
        }
        out.push('\n');
    }
    for m in missing {
        out.push_str(&format!("  {m}: no earlier run of this cell\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::Run;
    use crate::results::ResultRow;

    fn run(i: usize, vals: &[f64]) -> Run {
        let rows = vals
            .iter()
            .enumerate()
            .map(|(k, v)| ResultRow {
                server: "s".into(),
                config: "c".into(),
                engine: "e".into(),
                workload: "w".into(),
                concurrency: 2,
                iteration: k as u32 + 1,
                status: crate::model::Status::Ok,
                qps: Some(*v),
                ..Default::default()
            })
            .collect();
        Run {
            path: format!("r{i}").into(),
            run_id: format!("r{i}"),
            report_metric: "qps".into(),
            rows,
            ..Run::default()
        }
    }

    /// A candidate copied into the store (same run id and instance token, another folder)
    /// is the candidate: not counted as noise beside it.
    #[test]
    fn a_candidates_copy_in_the_store_is_not_noise() {
        let mut runs: Vec<Run> = [100.0, 108.0, 96.0]
            .iter()
            .enumerate()
            .map(|(i, m)| run(i, &[m * 0.99, *m, m * 1.01]))
            .collect();
        for r in &mut runs {
            r.instance = format!("token-{}", r.run_id);
        }
        let candidate = Run {
            path: "elsewhere/r2".into(),
            ..runs[2].clone()
        };
        let qps = Metric::find("qps").unwrap();
        assert_eq!(Noise::learn(&runs, &[qps], &[], &[]).runs, 3);
        assert_eq!(Noise::learn(&runs, &[qps], &[], &[candidate]).runs, 2);
    }

    /// Four runs of one cell, iterations spread by ~1%, run means by ~4%: the MDE follows
    /// `stats::power`, more iterations shrink it down to the floor the run noise sets, and a
    /// target under that floor is out of reach.
    #[test]
    fn plan_power_of_a_stored_cell() {
        let runs: Vec<Run> = [100.0, 108.0, 96.0, 104.0]
            .iter()
            .enumerate()
            .map(|(i, m)| run(i, &[m * 0.99, *m, m * 1.01]))
            .collect();
        let qps = Metric::find("qps").unwrap();
        let noise = Noise::learn(&runs, &[qps], &[], &[]);
        let key = runs[0].samples(qps, &[]).keys().next().unwrap().clone();
        let mut opts = PlanPower {
            threshold_pct: 5.0,
            confidence: Confidence::default(),
            assumed_run_noise_pct: 3.0,
            iterations: 3,
            target_pct: Some(20.0),
        };
        let rows = plan_power(&[(key.clone(), "cell".into())], qps, &noise, &opts);
        let r = &rows[0];
        assert!(r.run_learned && r.runs == 4, "{r:?}");
        let it = noise.iterations("qps", &key).unwrap();
        let rn = noise.get("qps", &key).unwrap();
        let (se, df) = planned_se(3, (it.var, it.df), (rn.run_var, rn.df));
        let want = mde_log(se, df, opts.confidence, 5.0, Regression::Drop);
        assert_eq!(r.mde, want);
        assert!(r.floor_pct <= r.mde.pct && r.mde.pct > 5.0, "{r:?}");
        assert!(
            r.needed.is_some_and(|n| n <= 3) || r.mde.pct > 20.0,
            "{r:?}"
        );
        opts.target_pct = Some(r.floor_pct * 0.99);
        let rows = plan_power(&[(key, "cell".into())], qps, &noise, &opts);
        assert_eq!(rows[0].needed, None);
        let text = render(&rows, &["other".into()], qps, &opts);
        assert!(
            text.contains("out of reach") && text.contains("other: no earlier run"),
            "{text}"
        );
    }
}
