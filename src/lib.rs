//! rmatrix: declarative benchmark matrix orchestrator.
//!
//! The pipeline, one module each: `matrix` (YAML -> plan) -> `server` (provision in Docker)
//! -> `drive` (workload clients, using `workload` SQL) -> `measure` -> `results` (run
//! directory) -> `report` (CSV/Markdown).

pub mod cli;
pub mod commands;
pub mod compare;
pub mod drive;
pub mod matrix;
pub mod measure;
pub mod progress;
pub mod report;
pub mod results;
pub mod run;
pub mod server;
pub mod stats;
pub mod workload;

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
        if cause.is::<server::docker::EngineUnavailable>() {
            return exit::NO_DOCKER;
        }
        if cause.is::<run::Interrupted>() {
            return exit::INTERRUPTED;
        }
    }
    exit::CELLS_FAILED
}
