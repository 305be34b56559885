//! The one seam between the run loop and the world outside it: start a deployment's server,
//! measure a cell on it, stop it, ask whether the engine still answers, wait. Docker
//! implements it (`docker`); the run loop's unit tests drive the loop with a double.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::drive::CellOutput;
use crate::matrix::{Cell, Deployment};
use crate::servers::Deployed;

/// What starting a deployment gave.
pub(super) struct Started {
    /// The container's name, once one was asked for (the manifest keeps it).
    pub(super) container: Option<String>,
    /// The running server with what it reports, or why there is none (what its cells fail
    /// with). Its variant is not judged yet: the loop does that.
    pub(super) server: Result<Deployed, String>,
    /// How it got its tables, where it started on a kept data set (or why not).
    pub(super) data: Vec<crate::results::manifest::DataFacts>,
}

/// What a worker asks of the world. Async functions in a crate-private trait: each worker
/// owns its backend, and the loop is generic over it (no boxing, no `Send` needed: a pool's
/// workers run on one task).
pub(super) trait Backend {
    /// Start (or attach to) the server of `d`; `ddir` is the deployment's folder.
    async fn start(&mut self, d: &Deployment, ddir: &Path) -> Started;
    /// Measure iteration `i` of `cell` on `deployed`; a failure is the row's.
    async fn measure(&mut self, cell: &Cell, i: u32, deployed: &Deployed) -> CellOutput;
    /// Save the server's log into `ddir` and remove it (nothing for an external server).
    async fn stop(&mut self, deployed: &Deployed, ddir: &Path) -> Result<()>;
    /// Did the kernel kill `deployed`'s server for lack of memory (Docker's `OOMKilled`)?
    async fn oom_killed(&self, deployed: &Deployed) -> bool;
    /// How many other rmatrix runs have containers running on the engine (None: no engine).
    async fn other_runs(&self) -> Option<u32>;
    /// Does the engine still answer (no engine: nothing to lose)?
    async fn alive(&self) -> bool;
    /// Wait for `d` (the matrix's cooldown).
    async fn pause(&self, d: Duration);
    /// The clock that `repeat.max_time` is read on.
    fn now(&self) -> Instant;
    /// Start the next servers on `cpuset` instead of their own, and keep the clients of
    /// their cells there (a duet's side in a round); None: as the matrix says.
    fn place(&mut self, _cpuset: Option<String>) {}
    /// Where `place` put the next servers, if anywhere.
    fn placed(&self) -> Option<String> {
        None
    }
}
