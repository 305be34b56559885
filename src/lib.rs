//! rmatrix: declarative benchmark matrix orchestrator.
//!
//! The pipeline: `matrix` (YAML -> plan) -> `servers` (provision in Docker, one folder per
//! family) -> `workloads` (one folder per kind: spec, what it sends, driver) -> `measure`
//! -> `results` (run directory) -> `report` (Markdown, CSV, charts). The modules are layered
//! (docs/architecture.md); `scripts/check-layers.sh` checks that none imports a higher one.

// Layer 0: plain data and pure functions.
pub mod escape;
pub mod model;
pub mod stats;
// Layer 1: reading input; measuring.
pub mod input;
pub mod measure;
// Layer 2: servers.
pub mod servers;
// Layer 3: workloads and their drivers.
pub mod workloads;
// Layer 4: the matrix and its plan.
pub mod matrix;
// Layer 5: the run directory.
pub mod results;
// Layer 6: reports.
pub mod report;
// Layer 7: comparisons between runs.
pub mod compare;
// Layer 8: output formats.
pub mod export;
// Layer 9: the application.
pub mod cli;
pub mod commands;
pub mod drive;
pub mod progress;
pub mod run;

/// Exit codes, documented in the README and `rmatrix --help`.
pub mod exit {
    pub const OK: i32 = 0;
    pub const CELLS_FAILED: i32 = 1;
    pub const BAD_INPUT: i32 = 2;
    pub const NO_DOCKER: i32 = 3;
    /// `rmatrix compare`: a metric regressed significantly beyond the threshold.
    pub const REGRESSION: i32 = 4;
    /// `rmatrix compare`/`history --require-same-env`: the runs' environments differ.
    pub const ENV_DIFFERS: i32 = 5;
    pub const INTERRUPTED: i32 = 130;
}

/// Bad usage that is not a matrix error (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Map an error chain to its exit code.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<matrix::MatrixError>()
            || cause.is::<UsageError>()
            || cause.is::<compare::CompareError>()
            || cause.is::<results::check::Refused>()
        {
            return exit::BAD_INPUT;
        }
        if cause.is::<compare::EnvDiffers>() {
            return exit::ENV_DIFFERS;
        }
        if cause.is::<servers::docker::EngineUnavailable>() {
            return exit::NO_DOCKER;
        }
        if cause.is::<run::Interrupted>() {
            return exit::INTERRUPTED;
        }
    }
    exit::CELLS_FAILED
}
