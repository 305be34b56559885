//! `rmatrix bisect`: the first commit of a `source:` server that has a regression.

use std::path::PathBuf;

use anyhow::Result;

use super::options::{ASSUMED_RUN_NOISE, COUNTED_THRESHOLD};
use crate::error::Outcome;

/// `rmatrix bisect`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct BisectArgs {
    /// The matrix (YAML) whose `source:` server is bisected. Not with --resume.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    pub(crate) matrix: Option<PathBuf>,
    /// A revision without the regression.
    #[arg(long, required_unless_present = "resume")]
    pub(crate) good: Option<String>,
    /// A revision with it (descending from --good).
    #[arg(long, required_unless_present = "resume")]
    pub(crate) bad: Option<String>,
    /// The `source:` server to bisect, when the matrix has several.
    #[arg(long)]
    pub(crate) server: Option<String>,
    /// Measure only these cells at the ends (as `run --only`); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) only: Vec<String>,
    /// A matrix parameter (as `run --set`); repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub(crate) set: Vec<String>,
    /// Follow only the first parent of merges.
    #[arg(long)]
    pub(crate) first_parent: bool,
    /// Directory of the bisection (default: reports/bisect/<time>-<matrix>).
    #[arg(long, conflicts_with = "resume")]
    pub(crate) out: Option<PathBuf>,
    /// Continue an interrupted bisection in DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) resume: Option<PathBuf>,
    /// As compare's --threshold.
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// As compare's --counted-threshold (a counted metric needs one run per step).
    #[arg(long, value_name = "PCT", default_value = COUNTED_THRESHOLD)]
    pub(crate) counted_threshold: String,
    /// As compare's --confidence.
    #[arg(long, default_value = "95%")]
    pub(crate) confidence: String,
    /// As compare's --noise-from: earlier runs of the matrix to learn run noise from.
    #[arg(long = "noise-from", value_name = "PATH")]
    pub(crate) noise_from: Vec<PathBuf>,
    /// As compare's --assume-run-noise.
    #[arg(long, value_name = "PCT", default_value = ASSUMED_RUN_NOISE)]
    pub(crate) assume_run_noise: String,
    /// Measure each commit side by side with the good end in shuffled rounds (as `rmatrix
    /// ab`), judged on the per-round ratios; rounds are added while a step cannot tell.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) paired: bool,
    /// With --paired: rounds of each batch.
    #[arg(long, default_value_t = 6)]
    pub(crate) rounds: u32,
    /// With --paired: most rounds of a cell per commit.
    #[arg(long, default_value_t = 30)]
    pub(crate) max_rounds: u32,
    /// With --paired: a range of at most N commits is scanned, every commit side by side in
    /// one run, instead of bisected (default 16; 0: never).
    #[arg(long, value_name = "N", conflicts_with = "resume")]
    pub(crate) scan_up_to: Option<u32>,
    /// With --paired: each step's two sides at the same time, each server and its client on
    /// half of this host's CPUs (as `rmatrix ab --duet`); the range is bisected, not scanned.
    #[arg(long, requires = "paired", conflicts_with = "scan_up_to")]
    pub(crate) duet: bool,
    /// As compare's --metric (default: the matrix's report metric; with --paired, as `rmatrix
    /// ab`: it and srv_cpu_us_per_op).
    #[arg(long = "metric", value_name = "NAME")]
    pub(crate) metrics: Vec<String>,
}

/// Run (or resume) the bisection of `a`, with its options as the bisection keeps them (for
/// `--resume`).
pub(super) async fn bisect(a: BisectArgs) -> Result<Outcome> {
    let args = crate::bisect::Args {
        matrix: a.matrix.unwrap_or_default(),
        good: a.good.unwrap_or_default(),
        bad: a.bad.unwrap_or_default(),
        server: a.server,
        only: a.only,
        set: crate::matrix::parse_set(&a.set)?,
        first_parent: a.first_parent,
        threshold: a.threshold,
        counted_threshold: a.counted_threshold,
        confidence: a.confidence,
        noise_from: a.noise_from,
        assume_run_noise: a.assume_run_noise,
        metrics: a.metrics,
        paired: a.paired,
        rounds: a.rounds,
        max_rounds: a.max_rounds,
        scan_up_to: a.scan_up_to,
        duet: a.duet,
        out: a.out,
    };
    crate::bisect::bisect(args, a.resume).await
}
