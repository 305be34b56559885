//! The command line's parser (clap derive): the commands and their help; each command's
//! options are in its own module.

use clap::{Parser, Subcommand};

use super::ab::AbArgs;
use super::bisect::BisectArgs;
use super::clean::CleanArgs;
use super::compare::CompareArgs;
use super::completions::CompletionsArgs;
use super::history::HistoryArgs;
use super::man::ManArgs;
use super::plan::PlanArgs;
use super::ratio::RatioArgs;
use super::report::ReportArgs;
use super::run::RunArgs;
use super::store::StoreArgs;

/// Declarative benchmark matrices for MariaDB/MySQL, PostgreSQL and Redis servers in Docker.
///
/// Expand a YAML matrix into cells, start a fresh server per server x config, verify the
/// variant, drive the workload, record throughput, latency and the server's own counters,
/// and render CSV and Markdown comparison tables.
///
/// Exit codes: 0 all cells ok, 1 some cells failed, 2 bad input or usage,
/// 3 Docker engine unavailable, 4 regression found by `compare`, 5 environments differ
/// (`compare`/`history --require-same-env`), 6/7 `bisect` found no regression / only skipped
/// commits, 8 cannot tell (`compare --fail-on-cannot-tell`, or a `bisect` whose ends' every
/// change is "cannot tell"), 130 interrupted.
#[derive(Debug, Parser)]
#[command(name = "rmatrix", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a matrix (or resume a stopped run) and write its run directory.
    Run(RunArgs),
    /// (Internal) Measure one cell iteration from a JSON cell spec on stdin and print the
    /// measurement as JSON: what a client container of a pooled run executes.
    #[command(hide = true)]
    DriveCell,
    /// (Internal) Wait for one deployment's server from a JSON spec on stdin, read it back
    /// and print what it reports as JSON: run on an engine's host for a pooled run.
    #[command(hide = true)]
    AwaitServer,
    /// (Internal) Print a free TCP port of this host as JSON: run on an engine's host.
    #[command(hide = true)]
    EnginePort,
    /// Show the cells a matrix expands to, their count and a rough time estimate.
    Plan(PlanArgs),
    /// Re-render the tables and charts of a stored run without running anything.
    Report(ReportArgs),
    /// Compare candidate runs with a baseline run, cell by cell (Welch's test on the
    /// logarithms of the iterations, plus the run-to-run noise learned from --noise-from);
    /// exit code 4 when a metric regressed significantly beyond the threshold.
    Compare(CompareArgs),
    /// The series of each cell and metric over stored runs (in start order), with change
    /// points flagged.
    History(HistoryArgs),
    /// Read per-round values `A B` (one round per line) on stdin and print, as one JSON line,
    /// the median of the per-round ratios A / B and their geometric mean with its interval
    /// (Student's t on the logarithms): what the side-by-side scripts in scripts/bench/ report.
    Ratio(RatioArgs),
    /// Find the first commit of a `source:` server that has a regression: measure the good
    /// and bad revisions, then the middle of the commits between them, judging each with
    /// compare's model on the cells the bad end regressed. Exit codes: 0 found, 6 the bad
    /// end is no regression, 7 only skipped commits are left (they did not build or start),
    /// 8 every change between the ends is "cannot tell" (measure more).
    Bisect(BisectArgs),
    /// Two builds of one server side by side: revisions of its `source:` work tree (or two
    /// images of an `image:` server) run as `<server>-a` and `<server>-b` of one matrix, in
    /// shuffled rounds with a fresh server each iteration, each cell judged B against A on
    /// its per-round ratios; rounds are added where a cell cannot tell yet. Writes ab.md and
    /// ab.json. Exit codes: 0 no regression, 4 a regression, 8 some cell cannot tell.
    Ab(AbArgs),
    /// Remove every container rmatrix started (found by its label), e.g. after a crash.
    Clean(CleanArgs),
    /// Keep runs in a results store: a SQLite file (created when missing) or a PostgreSQL
    /// database (postgres://USER@HOST:PORT/DB; the password from the URL or PGPASSWORD).
    /// `history` and `compare --noise-from` read a store where they read run directories.
    Store(StoreArgs),
    /// Print the JSON Schema of a matrix file (shipped as matrices/matrix.schema.json): an
    /// editor's YAML language server completes and checks a matrix with it.
    Schema,
    /// Print the completion script of SHELL, e.g. `rmatrix completions bash >
    /// ~/.local/share/bash-completion/completions/rmatrix`.
    Completions(CompletionsArgs),
    /// Print rmatrix's man page, or write one page per command into DIR (rmatrix.1,
    /// rmatrix-run.1, ...).
    Man(ManArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn completions_leave_out_the_internal_commands() {
        let bash = super::super::generate::completions(Cli::command(), clap_complete::Shell::Bash);
        assert!(bash.contains("compare"));
        for internal in ["drive-cell", "await-server", "engine-port"] {
            assert!(!bash.contains(internal), "{internal}");
        }
    }
}
