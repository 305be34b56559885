//! `rmatrix ab`: two builds of one server side by side.

use std::path::PathBuf;

use anyhow::Result;

use crate::error::Outcome;

/// `rmatrix ab`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct AbArgs {
    /// The matrix (YAML) whose server is compared.
    pub(crate) matrix: PathBuf,
    /// Side A, the reference: a revision of the server's `source:` work tree, or an image.
    #[arg(long)]
    pub(crate) a: String,
    /// Side B, the candidate, judged against A.
    #[arg(long)]
    pub(crate) b: String,
    /// The server to compare, when the matrix has several.
    #[arg(long)]
    pub(crate) server: Option<String>,
    /// Measure only these cells (as `run --only`); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) only: Vec<String>,
    /// A control cell (KEY=VALUE, as --only; repeatable, all must match): one the change
    /// cannot touch (`workload=set` when only GET changed). If it regresses or improves, the
    /// host or the design moved the sides apart, and the run cannot tell (exit 8).
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) control: Vec<String>,
    /// A matrix parameter (as `run --set`); repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub(crate) set: Vec<String>,
    /// Directory of the A/B (default: reports/ab/<time>-<matrix>).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Rounds of the first batch, and of each batch added (6: the fewest with a 95% rank
    /// interval).
    #[arg(long, default_value_t = 6)]
    pub(crate) rounds: u32,
    /// Most rounds of a cell over all batches.
    #[arg(long, default_value_t = 30)]
    pub(crate) max_rounds: u32,
    /// No batch is added that would end after this much time from the start, e.g. `20m`.
    #[arg(long, value_name = "DURATION")]
    pub(crate) budget: Option<String>,
    /// As compare's --threshold.
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// As compare's --confidence.
    #[arg(long, default_value = "95%")]
    pub(crate) confidence: String,
    /// As compare's --metric (default: the matrix's report metric and srv_cpu_us_per_op).
    #[arg(long = "metric", value_name = "NAME")]
    pub(crate) metrics: Vec<String>,
    /// A B A B rounds instead of each round in a random order.
    #[arg(long)]
    pub(crate) interleaved: bool,
    /// Both sides at the same time, each server and its client on half of this host's CPUs,
    /// judged per simultaneous pair (a matrix of one server, rmatrix's own clients pinned).
    #[arg(long)]
    pub(crate) duet: bool,
    /// Seed of the shuffled order (default: drawn at random and recorded in ab.json).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
}

/// Run the A/B of `a`.
pub(super) async fn ab(a: AbArgs) -> Result<Outcome> {
    crate::ab::ab(crate::ab::Args {
        matrix: a.matrix,
        a: a.a,
        b: a.b,
        server: a.server,
        only: a.only,
        control: a.control,
        set: crate::matrix::parse_set(&a.set)?,
        out: a.out,
        rounds: a.rounds,
        max_rounds: a.max_rounds,
        budget: a.budget,
        threshold: a.threshold,
        confidence: a.confidence,
        metrics: a.metrics,
        interleaved: a.interleaved,
        duet: a.duet,
        seed: a.seed,
    })
    .await
}
