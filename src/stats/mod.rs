//! The one statistics model of rmatrix, used by the summary, `report`, `compare` and
//! `history`. Pure data in, numbers out; nothing here imports the rest of the crate.
//!
//! - [`Confidence`]: one level (default 95%) for every interval, and `alpha = 1 - level`
//!   for every test, so that "significant" always means "the interval excludes no change".
//! - [`summary`]: one cell's iterations: mean, spread and the interval of the mean.
//! - [`batch`]: one long iteration's per-second samples as batch means, for cells measured
//!   once (`iterations: 1`), with their autocorrelation checked.
//! - [`change`]: the change between two cells as a ratio, tested and bounded on the log
//!   scale (never below -100%), optionally with a run-to-run variance learned from history.
//! - [`counted`]: the change of a counted metric (instructions under callgrind): no noise
//!   model, a small threshold and whether the two sides' counts overlap.
//! - [`changepoint`]: change points of a whole history of run means (E-divisive means with a
//!   t-test, [`edivisive`] its statistic), for `history`.
//! - [`dist`]: Student's t distribution (the only t quantile in the crate).
//! - [`power`]: the minimum detectable effect of a compare (what change it flags with 80%
//!   power at the confidence level and the threshold), judged or planned.
//! - [`multiple`]: many cells at once: how alpha adds up, Benjamini-Hochberg adjustment.
//! - [`paired`]: two tools measured in the same rounds: the per-round ratios, their median
//!   and geometric mean with its interval (`rmatrix ratio`).
//! - [`paired_change`]: deployments measured in the same rounds, judged on the per-round
//!   log-ratios: Hodges-Lehmann with the signed-rank interval ([`signed_rank`]), the median
//!   with the sign test's ([`sign`]), the paired mean's t interval ([`located`] their shape);
//!   [`jumps`] flags the rounds whose host CPU pressure jumped; [`uneven`] the duet rounds
//!   whose sides got unequal CPU; [`spending`] the level of each look when rounds are added
//!   until a cell can tell.
//! - [`apdex`], [`knee`], [`drift`]: what a load study asks of its curves: Apdex[T], the knee
//!   of a sweep and the maximum sustainable load, drift between the ends of a long run.

pub(crate) mod apdex;
pub(crate) mod batch;
pub(crate) mod change;
pub(crate) mod changepoint;
pub(crate) mod counted;
pub(crate) mod dist;
pub(crate) mod drift;
pub(crate) mod edivisive;
pub(crate) mod jumps;
pub(crate) mod knee;
pub(crate) mod level;
pub(crate) mod located;
pub(crate) mod multiple;
pub(crate) mod paired;
pub(crate) mod paired_change;
pub(crate) mod power;
pub(crate) mod sign;
pub(crate) mod signed_rank;
pub(crate) mod spending;
pub(crate) mod summary;
pub(crate) mod uneven;

pub(crate) use batch::batch_means;
pub(crate) use change::{change, change_batches, Basis, Change, RunNoise};
pub(crate) use level::Confidence;
pub(crate) use summary::summarize;
