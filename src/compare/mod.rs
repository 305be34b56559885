//! Baseline vs candidate: join the cells of stored run directories by their dimensions and
//! decide, per metric, whether the candidate improved, regressed, stayed the same, or whether
//! the iterations cannot tell. Also the history of many runs with change points.
//!
//! # Which test, and why
//!
//! Each cell is measured `iterations` times, each iteration (ideally) on a fresh server. The
//! per-iteration values of the baseline and the candidate are compared with **Welch's
//! unequal-variances t-test** (two-sided), and the confidence interval of the difference of
//! the means is the Welch interval at level `1 - alpha`:
//!
//! - the two runs are independent samples whose spreads differ (a config change often changes
//!   the noise as well as the mean), which is exactly what Welch handles and Student's pooled
//!   test does not;
//! - with the 3 to 10 iterations a matrix can afford, a bootstrap interval is unreliable (it
//!   can only resample the few values it has and is too narrow), while the t-test's
//!   assumption (means of iterations roughly normal) is reasonable for throughput and
//!   latency averages of whole runs;
//! - it is what latte uses for the same purpose and what Hunter/Otava use to confirm change
//!   points, so its results read the same way to people who know those tools.
//!
//! The iterations are the samples, not the per-second values inside a run: between-restart
//! noise (a few percent for MariaDB) is the noise that matters, and only repeated runs see it.
//!
//! # Verdicts
//!
//! With `change = (candidate - baseline) / |baseline|` and its `1 - alpha` interval:
//! - **improved / regressed**: p < alpha and |change| >= threshold, in the metric's direction;
//! - **small**: p < alpha and the interval lies inside ±threshold (real, too small to count);
//! - **unchanged**: not significant and the interval lies inside ±threshold;
//! - **cannot tell**: anything else (the interval reaches past the threshold while the change
//!   is not a significant one beyond it), or fewer than two iterations on a side.
//!
//! Only `regressed` fails a comparison (exit code 4); `--fail-on-cannot-tell` makes "cannot
//! tell" exit 8. See docs/compare.md.

pub(crate) mod counted_diff;
pub(crate) mod env;
pub(crate) mod error;
pub(crate) mod history;
pub(crate) mod input;
pub(crate) mod join;
pub(crate) mod noise;
pub(crate) mod profiles;
pub(crate) mod rerun;
pub(crate) mod sensitivity;

pub(crate) use env::EnvDiffers;
pub(crate) use error::CompareError;
