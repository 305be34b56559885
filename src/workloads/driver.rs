//! The one interface every workload kind implements (`Driver`), what a driver is given
//! (`Ctx`), and what is the same around every iteration: the stall watchdog.

use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use super::pace::Pace;
use super::stall;
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::Live;
use crate::servers::dataset::Layout;
use crate::servers::spec::ServerKind;
use crate::servers::{Deployed, Endpoint};

/// Everything a driver needs for one iteration of one cell.
pub(crate) struct Ctx<'a> {
    pub(crate) server: &'a Deployed,
    /// The server's family (one of the driver's `families`).
    pub(crate) kind: ServerKind,
    /// The cell's storage engine, where the engine axis applies.
    pub(crate) engine: Option<&'a str>,
    /// Client connections (the cell's concurrency).
    pub(crate) concurrency: u32,
    /// Load run before the measured phase and discarded.
    pub(crate) warmup: Option<Length>,
    /// The measured phase: a count of operations or a duration (None only for a kind that
    /// runs whole, which the matrix check makes sure of).
    pub(crate) length: Option<Length>,
    /// Operations completed so far, of every phase (prepare, warmup, measured): the status
    /// line and the stall watchdog read it.
    pub(crate) live: Arc<AtomicU64>,
    /// Open loop: the schedule requests start on (None: closed loop, each connection sends
    /// when its last request answered).
    pub(crate) pace: Option<Pace>,
    /// Where the driver shows its measured phase's seconds as they complete (the status
    /// line); drivers of external tools leave it empty.
    pub(crate) phase: Arc<Live>,
    /// The measured phase's edges: opened right before the measured phase and closed right
    /// after (by `phases::Phases` for a driver with its own clients), so that the server's
    /// usage in between is its cost.
    pub(crate) window: Arc<Window>,
}

/// What one iteration of a driver that talks to its server itself runs with: the parts of
/// `Ctx` it uses, borrowed, so that a test can run one without a `Deployed`.
pub struct Iteration<'a> {
    pub endpoint: &'a Endpoint,
    /// Client connections.
    pub concurrency: u32,
    /// Load run before the measured phase and discarded.
    pub warmup: Option<Length>,
    /// The measured phase: a count of operations or a duration.
    pub length: Length,
    /// Operations completed so far, of every phase (`Ctx::live`).
    pub live: &'a Arc<AtomicU64>,
    /// The measured phase's edges (`Ctx::window`).
    pub window: &'a Window,
    /// Open loop: the schedule requests start on (None: closed loop).
    pub pace: Option<&'a Pace>,
    /// Where the measured phase's seconds are shown (None: nowhere).
    pub phase: Option<&'a Arc<Live>>,
}

impl Ctx<'_> {
    /// The measured phase's length, for a kind that runs for one.
    pub(crate) fn length(&self) -> Result<Length> {
        self.length
            .ok_or_else(|| anyhow::anyhow!("the matrix gives no `length` for this workload"))
    }

    /// The parts of the context that a SQL driver's phases run with.
    pub(crate) fn iteration(&self) -> Result<Iteration<'_>> {
        Ok(Iteration {
            endpoint: &self.server.endpoint,
            concurrency: self.concurrency,
            warmup: self.warmup,
            length: self.length()?,
            live: &self.live,
            window: &self.window,
            pace: self.pace.as_ref(),
            phase: Some(&self.phase),
        })
    }

    /// Open loop's target rate of the cell (for a tool that takes only a number).
    pub(crate) fn cell_rate(&self) -> Option<u32> {
        self.pace.as_ref().map(Pace::rate)
    }
}

/// A workload kind's options, able to run against a server.
pub(crate) trait Driver {
    /// The server families the kind speaks to (a matrix pairing it with another is refused
    /// at plan time); `Ctx::kind` says which one a cell's server is.
    fn families(&self) -> &'static [ServerKind];

    /// Why a family outside `families` is refused, when there is more to say than that the
    /// kind speaks to others (a tool with no driver for one of the SQL families).
    fn refuses(&self, _kind: ServerKind) -> Option<String> {
        None
    }

    /// Whether the kind creates its own tables, so that the matrix's `engines` axis applies.
    fn uses_engine(&self) -> bool {
        false
    }

    /// What the kind does to the server's existing data before each iteration, said where an
    /// external server must allow it (`may_reset`); None when it leaves other data alone.
    fn resets(&self) -> Option<&'static str> {
        None
    }

    /// Whether a timed `length` bounds the measured phase (sql-bench's suite runs to its end).
    fn runs_for_length(&self) -> bool {
        true
    }

    /// Whether the driver counts operations in `live` as they complete. An external tool
    /// reports only when it ends, so the stall watchdog asks the server instead.
    fn counts_live(&self) -> bool {
        true
    }

    /// Whether the kind's clients are threads of this process, whose CPU demand over the
    /// measured phase tells a client-bound cell; an external tool's process is not.
    fn client_in_process(&self) -> bool {
        true
    }

    /// Whether the server's counters may be read once a second during its phases
    /// (`measure::server_seconds`): not for a kind that snapshots them around each of its
    /// own operations, where the reads would land in the operations' counts.
    fn reads_server_seconds(&self) -> bool {
        true
    }

    /// How the kind's clients reach the server, for manifest.json: `tcp` (the run's
    /// endpoint) unless the kind says otherwise.
    fn transport(&self) -> &'static str {
        "tcp"
    }

    /// The external program the kind runs (sysbench, pgbench...), whose version manifest.json
    /// records; None when its clients are rmatrix's own.
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        None
    }

    /// The tables the kind loads before it measures, on a cell of `engine` (None: it loads
    /// none, or loads them afresh each iteration): what a kept data set holds
    /// (`servers::dataset`).
    fn data_layout(&self, _engine: Option<&str>) -> Option<Layout> {
        None
    }

    /// Load the tables of `data_layout` on a server that has none (a kept set's first
    /// server); each loaded chunk counts in `live`.
    fn prepare(
        &self,
        _kind: ServerKind,
        _endpoint: &Endpoint,
        _engine: Option<&str>,
        _live: &AtomicU64,
    ) -> impl Future<Output = Result<()>> {
        async { Ok(()) }
    }

    /// Checks the types cannot express, before any container starts.
    fn check(&self, _facts: &Facts) -> Result<(), Problem> {
        Ok(())
    }

    /// What of `check` the matrix's JSON Schema can state (`rmatrix schema`): bounds, words
    /// and patterns of single options, from the same constants.
    fn schema_rules() -> Vec<SchemaRule>
    where
        Self: Sized,
    {
        Vec::new()
    }

    /// One iteration: prepare what is missing, warm up, measure. The measurement carries
    /// the per-second samples of the measured phase.
    fn run(&self, ctx: &Ctx<'_>) -> impl Future<Output = Result<Measurement>>;
}

/// JSON Schema keywords for the option at a path below the kind (`""`: the kind's options as
/// a whole), merged into what its type derives.
pub(crate) type SchemaRule = (&'static str, serde_json::Value);

/// The ranges of `settings` (`input::bounds`) as schema rules: the option's minimum and
/// maximum (a list's length, where the option is a list).
pub(crate) fn range_rules(settings: &[crate::input::bounds::Bounded<'static>]) -> Vec<SchemaRule> {
    settings
        .iter()
        .map(|(at, _, range)| {
            let keywords = serde_json::json!({"minimum": range.start(), "maximum": range.end()});
            (*at, keywords)
        })
        .collect()
}

/// What a kind's checks may need to know about the rest of the matrix.
pub(crate) struct Facts {
    pub(crate) length: Option<Length>,
    /// Open loop: the pace of the matrix's first rate (its shape and spacing are those of
    /// every cell).
    pub(crate) pace: Option<Pace>,
    /// The concurrency levels of this workload's cells (after `exclude` and `include`), in
    /// the matrix's order.
    pub(crate) concurrency: Vec<u32>,
    pub(crate) warmup: Option<Length>,
    /// Whether a sweep of levels stops at a rule (`load.until`).
    pub(crate) until: bool,
    /// The external servers (`external:`, no container) among this workload's cells.
    pub(crate) external: Vec<String>,
    /// Whether servers run on a bridge network (`network: bridge`) rather than the host's.
    pub(crate) bridge: bool,
}

/// A problem with a workload's options, at a path below `workloads.<name>.<kind>`
/// (`pipeline`, `options.threads`; empty for the block itself), or with a setting of the
/// matrix the workload cannot follow (`concurrency`, `warmup`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub(crate) at: String,
    /// Point at the key rather than its value (a bad option name).
    pub(crate) on_key: bool,
    /// `at` is a path from the matrix's top (`load.until`), not below the workload.
    pub(crate) in_matrix: bool,
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn at(at: &str, message: impl Into<String>) -> Problem {
        Problem {
            at: at.to_string(),
            on_key: false,
            in_matrix: false,
            message: message.into(),
        }
    }

    /// A setting of the matrix at `at` (from its top) that the workload cannot follow.
    pub(crate) fn in_matrix(at: &str, message: impl Into<String>) -> Problem {
        Problem {
            in_matrix: true,
            ..Problem::at(at, message)
        }
    }

    /// The first of `settings` outside its range (`input::bounds`), at its value.
    pub(crate) fn bounded(settings: &[crate::input::bounds::Bounded]) -> Result<(), Problem> {
        match crate::input::bounds::first_outside(settings) {
            Some((at, message)) => Err(Problem::at(at, message)),
            None => Ok(()),
        }
    }

    pub(crate) fn at_key(at: &str, message: impl Into<String>) -> Problem {
        Problem {
            on_key: true,
            ..Problem::at(at, message)
        }
    }
}

/// Run `driver` for one iteration under the stall watchdog: an iteration in which no
/// operation completes for `stall_timeout` fails with `stall::Stalled`, and its clients are
/// stopped. rmatrix's own clients count their operations; for the external tools the
/// server is asked once a second whether it answers at all (`stall::probe_server`); when it
/// stops, the tool is killed.
pub(crate) async fn run_iteration<D: Driver>(
    driver: &D,
    ctx: &Ctx<'_>,
    stall_timeout: Duration,
) -> Result<Measurement> {
    let probed = (!driver.counts_live()).then_some(ctx.kind);
    let ops = match probed {
        None => ctx.live.clone(),
        Some(_) => Arc::new(AtomicU64::new(0)),
    };
    let probe = async {
        match probed {
            Some(family) => {
                stall::probe_server(&ctx.server.endpoint, family.family(), stall_timeout, &ops)
                    .await
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = driver.run(ctx) => match r {
            // A driver that ignored the pace ran closed loop: its numbers are not the cell's.
            Ok(m) if ctx.pace.is_some() && m.open.is_none() => {
                anyhow::bail!("this workload kind does not run open loop")
            }
            r => r,
        },
        _ = probe => unreachable!("the probe runs until dropped"),
        stalled = stall::watch(&ops, stall_timeout, match probed {
            None => "no operation completed",
            Some(_) => "the server answered no probe",
        }) => Err(stalled.into()),
    }
}
