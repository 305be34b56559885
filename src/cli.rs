//! Command line: clap derive, one `///` line of help per option.

pub(crate) mod generate;

use std::path::PathBuf;

use crate::export::Format;
use clap::{Parser, Subcommand};

/// `--assume-run-noise`'s default (compare and plan): the CV of run means assumed without a
/// store; docs/compare.md gives the runs it was chosen from.
pub(crate) const ASSUMED_RUN_NOISE: &str = "5%";

/// `--counted-threshold`'s default (compare and bisect): well above what one build's counted
/// instructions vary by between runs (docs/counted.md: a CV of run means near 0.1% for Redis
/// GET, so an A/A difference of 0.5% lies beyond three of its standard deviations).
pub(crate) const COUNTED_THRESHOLD: &str = "0.5%";

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
    Plan {
        /// The matrix file (YAML).
        matrix: PathBuf,
        /// Keep only cells where dimension KEY has VALUE (comma list allowed); repeatable.
        #[arg(long, value_name = "KEY=VALUE")]
        only: Vec<String>,
        /// The value of the matrix's parameter NAME (`params:`), before RMATRIX_PARAM_NAME and
        /// its default; repeatable.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        #[command(flatten)]
        power: PlanPowerArgs,
        #[command(flatten)]
        output: PlanOutputArgs,
    },
    /// Re-render the tables and charts of a stored run without running anything.
    Report {
        /// A run directory written by `rmatrix run`.
        dir: PathBuf,
        /// minijinja template for the Markdown output.
        #[arg(long)]
        template: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
        /// Store the re-rendered summary.md, charts/ and report.html in DIR instead of
        /// printing (e.g. after upgrading rmatrix).
        #[arg(long)]
        write: bool,
        /// OpenMetrics: leave out the `run_id` and `matrix` labels, so that a cell is the
        /// same series from run to run (a dashboard's view; two runs' files then collide).
        #[arg(long)]
        no_run_labels: bool,
        /// OpenMetrics: stamp each sample with its iteration's start, so the file can be
        /// backfilled into Prometheus (`promtool tsdb create-blocks-from openmetrics`).
        #[arg(long)]
        timestamps: bool,
    },
    /// Compare candidate runs with a baseline run, cell by cell (Welch's test on the
    /// logarithms of the iterations, plus the run-to-run noise learned from --noise-from);
    /// exit code 4 when a metric regressed significantly beyond the threshold.
    Compare {
        /// The baseline run directory (e.g. the last good nightly run).
        baseline: PathBuf,
        /// One or more candidate run directories, each compared with the baseline.
        #[arg(required = true)]
        candidates: Vec<PathBuf>,
        /// Smallest change of a mean that counts, in percent of the baseline (`5%` or `5`).
        #[arg(long, default_value = "5%")]
        threshold: String,
        /// Smallest change of a counted metric (`srv_instr_per_op`, `counted: callgrind`)
        /// that counts: counts have no run-to-run noise to test, so a change at least this
        /// large whose two sides' counts do not overlap is flagged.
        #[arg(long, value_name = "PCT", default_value = COUNTED_THRESHOLD)]
        counted_threshold: String,
        /// Confidence level of every interval (`95`, `95%` or `0.95`); the tests run at
        /// alpha = 1 - level, so "significant" means "the interval excludes no change".
        #[arg(long, default_value = "95%", conflicts_with = "alpha")]
        confidence: String,
        /// The same as a significance level: `--alpha 0.01` is `--confidence 99%`.
        #[arg(long)]
        alpha: Option<f64>,
        /// Earlier runs (a run directory or a folder of them, e.g. the nightly store of
        /// accepted runs, or a results store: a SQLite file or a postgres:// URL, whose runs
        /// of the candidates' matrices are read; repeatable) to learn each cell's run-to-run
        /// noise from; needs 3 or more runs of a cell. Without it, verdicts rest on the
        /// iterations of the two runs.
        #[arg(long = "noise-from", value_name = "PATH")]
        noise_from: Vec<PathBuf>,
        /// The coefficient of variation of run means (5% by default) assumed for a cell whose run noise
        /// is not learned (no --noise-from, or fewer than 3 runs of it): a safe default for a
        /// first compare; `0` judges such a cell on its iterations only.
        #[arg(long, value_name = "PCT", default_value = ASSUMED_RUN_NOISE)]
        assume_run_noise: String,
        /// Judge significance on Benjamini-Hochberg adjusted p-values over all the changes of
        /// a compare: at most alpha of the flagged changes false, on average, instead of
        /// alpha of every cell.
        #[arg(long)]
        fdr: bool,
        /// Exit with code 8 when no metric regressed but some change is "cannot tell" (its
        /// interval reaches past the threshold): a gate that must not accept what it could
        /// not judge (the nightly recipe's promotion).
        #[arg(long)]
        fail_on_cannot_tell: bool,
        /// Metric to compare (repeatable or comma list; `all`); default: the matrix's
        /// report metric.
        #[arg(long = "metric", value_name = "NAME")]
        metrics: Vec<String>,
        /// Leave dimension DIM out of the join (e.g. compare server A's run with server B's).
        #[arg(long, value_name = "DIM")]
        ignore: Vec<String>,
        /// Refuse to compare (exit code 5) when host, rmatrix version, images, server
        /// versions or server variables differ between the baseline and a candidate.
        #[arg(long)]
        require_same_env: bool,
        /// Draw the differential flame graph of each compared cell whose runs both hold
        /// server profiles (`profile:` in the matrix, or `run --profile`) into DIR.
        #[arg(long, value_name = "DIR")]
        profiles: Option<std::path::PathBuf>,
        /// Also write JUnit XML to FILE (one test case per compared cell and metric, a failure
        /// per regression), for a CI job's test report; the exit code stays compare's.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
    },
    /// The series of each cell and metric over stored runs (in start order), with change
    /// points flagged.
    History {
        /// Run directories, folders of run directories such as reports/runs, or results
        /// stores (a SQLite file or a postgres:// URL; `rmatrix store`).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Only the runs of the matrix called NAME (its `name:`); repeatable.
        #[arg(long = "matrix", value_name = "NAME")]
        matrices: Vec<String>,
        /// Metric to follow (repeatable or comma list; `all`); default: each run's own
        /// report metric.
        #[arg(long = "metric", value_name = "NAME")]
        metrics: Vec<String>,
        /// Smallest shift of the mean that counts as a change point (`5%` or `5`).
        #[arg(long, default_value = "5%")]
        threshold: String,
        /// The same for a counted metric (`srv_instr_per_op`): counts barely move between
        /// runs of one build.
        #[arg(long, value_name = "PCT", default_value = COUNTED_THRESHOLD)]
        counted_threshold: String,
        /// Confidence level of the test of each change point and of its interval
        /// (alpha = 1 - level).
        #[arg(long, default_value = "95%", conflicts_with = "alpha")]
        confidence: String,
        /// The same as a significance level: `--alpha 0.05` is `--confidence 95%`.
        #[arg(long)]
        alpha: Option<f64>,
        /// Runs shown as columns in the Markdown view (CSV and JSON have every run).
        #[arg(long, default_value_t = 8)]
        last: usize,
        /// No longer used: change points are searched over each whole series. Still accepted
        /// (with a note on stderr) so that scripts that pass it keep working.
        #[arg(long, value_name = "RUNS")]
        window: Option<usize>,
        /// Fewest runs in a segment between change points (at least 2): a change point needs
        /// this many runs on each side.
        #[arg(long, default_value_t = 3)]
        min_points: usize,
        /// Leave dimension DIM out of the series key.
        #[arg(long, value_name = "DIM")]
        ignore: Vec<String>,
        /// Refuse (exit code 5) when any run's environment differs from the first run's.
        #[arg(long)]
        require_same_env: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
    },
    /// Read per-round values `A B` (one round per line) on stdin and print, as one JSON line,
    /// the median of the per-round ratios A / B and their geometric mean with its interval
    /// (Student's t on the logarithms): what the side-by-side scripts in scripts/bench/ report.
    Ratio {
        /// Confidence level of the interval (`95`, `95%` or `0.95`).
        #[arg(long, default_value = "95%")]
        confidence: String,
    },
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
    Clean {
        /// Clean these engines (repeatable, as `run --engine`) instead of the default one.
        #[arg(long = "engine", value_name = "URL")]
        engines: Vec<String>,
        /// Also remove the kept data sets (`datasets: {reuse: true}`): later runs prepare
        /// their tables again.
        #[arg(long)]
        datasets: bool,
        /// Also remove the client images (this binary in a Debian base, built for pooled
        /// runs' client containers): the next such run builds its own again.
        #[arg(long)]
        images: bool,
    },
    /// Keep runs in a results store: a SQLite file (created when missing) or a PostgreSQL
    /// database (postgres://USER@HOST:PORT/DB; the password from the URL or PGPASSWORD).
    /// `history` and `compare --noise-from` read a store where they read run directories.
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// Print the JSON Schema of a matrix file (shipped as matrices/matrix.schema.json): an
    /// editor's YAML language server completes and checks a matrix with it.
    Schema,
    /// Print the completion script of SHELL, e.g. `rmatrix completions bash >
    /// ~/.local/share/bash-completion/completions/rmatrix`.
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print rmatrix's man page, or write one page per command into DIR (rmatrix.1,
    /// rmatrix-run.1, ...).
    Man {
        /// Write the pages into this folder (created if missing) instead of printing the
        /// main page.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

/// `rmatrix store`'s actions.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum StoreAction {
    /// Store run directories (each, or every run in a folder such as reports/runs). A run
    /// stored before is left as it is, or replaced when its content changed (a resumed run).
    Import {
        /// The store: a SQLite file or a postgres:// URL.
        #[arg(long, value_name = "STORE")]
        store: String,
        /// Run directories, or folders of them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// List the stored runs: id, matrix, start, iterations (ok / all), where each came from.
    List {
        /// The store: a SQLite file or a postgres:// URL.
        #[arg(long, value_name = "STORE")]
        store: String,
        /// Only the runs of the matrix called NAME.
        #[arg(long, value_name = "NAME")]
        matrix: Option<String>,
        /// `text`, or `json` for scripts.
        #[arg(long, value_enum, default_value = "text")]
        format: PlanFormat,
    },
}

/// `rmatrix plan`'s output and where its estimate learns from.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanOutputArgs {
    /// `text`, or `json` for scripts: the cells by deployment, the counts and the estimate.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: PlanFormat,
    /// Stored runs the estimate learns this matrix's timings from: run directories, folders
    /// of them or results stores (a SQLite file or a postgres:// URL); repeatable (default:
    /// reports/runs and reports/examples).
    #[arg(long = "learn-from", value_name = "PATH")]
    pub(crate) learn_from: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlanFormat {
    Text,
    Json,
}

/// `rmatrix plan`'s detection-power options.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanPowerArgs {
    /// Earlier runs of the matrix (as `compare --noise-from`): print the smallest
    /// regression each cell's compare would flag with 80% power at the matrix's iterations.
    #[arg(long = "noise-from", value_name = "PATH")]
    pub(crate) noise_from: Vec<PathBuf>,
    /// With --noise-from: the iterations per cell needed for compare to see a regression
    /// of PCT (above --threshold) with 80% power.
    #[arg(long, value_name = "PCT", requires = "noise_from")]
    pub(crate) target: Option<String>,
    /// The threshold compare will use (`5%` or `5`).
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// The confidence level compare will use (`95`, `95%` or `0.95`).
    #[arg(long, default_value = "95%")]
    pub(crate) confidence: String,
    /// The CV of run means assumed for a cell with fewer than 3 runs in the store, as
    /// `compare --assume-run-noise`.
    #[arg(long, value_name = "PCT", default_value = ASSUMED_RUN_NOISE)]
    pub(crate) assume_run_noise: String,
}

/// `rmatrix run`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The matrix file (YAML). Not with --resume: a resumed run uses its own stored copy.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    pub(crate) matrix: Option<PathBuf>,
    /// Run directory to create (default: reports/runs/<time>-<name>); never overwritten.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) out: Option<PathBuf>,
    /// Continue a stopped run: run only the cell iterations missing from DIR/results.csv.
    #[arg(long, value_name = "DIR")]
    pub(crate) resume: Option<PathBuf>,
    /// Run only cells where dimension KEY has VALUE (comma list allowed); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) only: Vec<String>,
    /// Run only the cells a comparison flagged as regressed (the JSON of `rmatrix compare
    /// --format json`): a nightly job's confirmation run.
    #[arg(long, value_name = "COMPARE_JSON", conflicts_with = "resume")]
    pub(crate) only_regressed: Option<PathBuf>,
    /// The value of the matrix's parameter NAME (`params:`), before RMATRIX_PARAM_NAME and
    /// its default; repeatable. Not with --resume: a resumed run keeps its values.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(crate) set: Vec<String>,
    /// minijinja template for summary.md (default: the built-in reports/templates/summary.md.j2).
    #[arg(long)]
    pub(crate) template: Option<PathBuf>,
    /// No progress and no summary on stdout; errors still go to stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Also keep the run in this results store when it ends (a SQLite file, created when
    /// missing, or a postgres:// URL; as `rmatrix store import`). It is opened before
    /// anything is measured: a store that cannot take the run is refused at once (exit 2).
    #[arg(long, value_name = "STORE")]
    pub(crate) store: Option<String>,
    /// A Docker engine of the pool (repeatable): unix://PATH, tcp://HOST:PORT (TLS from
    /// DOCKER_TLS_VERIFY/DOCKER_CERT_PATH), ssh://[USER@]HOST, or a Docker context name.
    /// Deployments are spread across the engines, one at a time on each.
    #[arg(long = "engine", value_name = "URL")]
    pub(crate) engines: Vec<String>,
    /// A hosts file listing the pool's engines (`engines:`), kept apart from the matrix.
    #[arg(long = "engines", value_name = "FILE", conflicts_with = "engines")]
    pub(crate) engines_file: Option<PathBuf>,
    /// Profile the server during each measured phase at HZ samples a second (perf
    /// record -e cpu-clock -g; default 99): a flame graph per cell, as `profile: {cpu: HZ}`
    /// in the matrix does. Not with --resume.
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "99", conflicts_with = "resume")]
    pub(crate) profile: Option<u32>,
}

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
