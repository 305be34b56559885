//! Command line: clap derive, one `///` line of help per option.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Declarative benchmark matrices for MariaDB/MySQL servers in Docker: expand a YAML matrix
/// into cells, start a fresh server per server x config, verify the variant, drive the
/// workload, record throughput, latency and the server's own counters, and render CSV and
/// Markdown comparison tables.
///
/// Exit codes: 0 all cells ok, 1 some cells failed, 2 bad input or usage,
/// 3 Docker engine unavailable, 130 interrupted.
#[derive(Debug, Parser)]
#[command(name = "rmatrix", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a matrix (or resume a stopped run) and write its run directory.
    Run {
        /// The matrix file (YAML). Not needed with --resume.
        #[arg(required_unless_present = "resume")]
        matrix: Option<PathBuf>,
        /// Run directory to create (default: reports/runs/<time>-<name>); never overwritten.
        #[arg(long, conflicts_with = "resume")]
        out: Option<PathBuf>,
        /// Continue a stopped run: run only the cell iterations missing from DIR/results.csv.
        #[arg(long, value_name = "DIR")]
        resume: Option<PathBuf>,
        /// Run only cells where dimension KEY has VALUE (comma list allowed); repeatable.
        #[arg(long, value_name = "KEY=VALUE")]
        only: Vec<String>,
        /// minijinja template for summary.md (default: the built-in reports/templates/summary.md.j2).
        #[arg(long)]
        template: Option<PathBuf>,
        /// No progress and no summary on stdout; errors still go to stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Show the cells a matrix expands to, their count and a rough time estimate.
    Plan {
        /// The matrix file (YAML).
        matrix: PathBuf,
        /// Keep only cells where dimension KEY has VALUE (comma list allowed); repeatable.
        #[arg(long, value_name = "KEY=VALUE")]
        only: Vec<String>,
    },
    /// Re-render the tables of a stored run without running anything.
    Report {
        /// A run directory written by `rmatrix run`.
        dir: PathBuf,
        /// minijinja template for the Markdown output.
        #[arg(long)]
        template: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
    },
    /// Remove every container rmatrix started (found by its label), e.g. after a crash.
    Clean,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Md,
    Csv,
    Json,
}
