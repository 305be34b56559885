//! rmatrix: declarative benchmark matrix orchestrator.
//!
//! The pipeline: `matrix` (YAML -> plan) -> `servers` (provision in Docker, one folder per
//! family) -> `workloads` (one folder per kind: spec, what it sends, driver) -> `measure`
//! -> `results` (run directory) -> `report` (Markdown, CSV, charts). The modules are layered
//! (docs/architecture.md); `scripts/check-layers.sh` checks that none imports a higher one.

// Layer 0: plain data and pure functions.
pub mod error;
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
// Layer 8: output formats, and the results store.
pub mod export;
pub mod store;
// Layer 9: the application.
pub mod ab;
pub mod bisect;
pub mod commands;
pub mod drive;
pub mod progress;
pub mod run;

// The error kinds are the bottom layer's (their exit codes are `commands::exit`'s); these
// names are kept for the binary, the tests and the application layer.
pub use error::{error_kind, ErrorKind, Kinded, KindedError, UsageError};

/// An error chain as the binary prints it: every cause, and nothing in them (an echoed
/// `--engine`, a path, a server's message) that a terminal would interpret.
pub fn error_text(err: &anyhow::Error) -> String {
    escape::terminal_lines(&format!("{err:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    fn kind(err: impl Into<anyhow::Error>) -> ErrorKind {
        error_kind(&err.into())
    }

    #[test]
    fn each_error_type_has_its_kind() {
        let matrix = matrix::MatrixError {
            file: "m.yaml".into(),
            line: 1,
            col: 1,
            message: "bad".into(),
        };
        let refused = results::check::Refused::Io {
            path: "x".into(),
            source: std::io::Error::other("gone"),
        };
        assert_eq!(kind(matrix), ErrorKind::BadInput);
        assert_eq!(kind(UsageError("bad".into())), ErrorKind::BadInput);
        assert_eq!(kind(refused), ErrorKind::BadInput);
        assert_eq!(
            kind(compare::CompareError::BadThreshold("x".into())),
            ErrorKind::BadInput
        );
        assert_eq!(kind(compare::EnvDiffers(Vec::new())), ErrorKind::EnvDiffers);
        assert_eq!(
            kind(servers::engines::docker::EngineUnavailable(
                "no socket".into()
            )),
            ErrorKind::NoDocker
        );
        assert_eq!(kind(run::Interrupted), ErrorKind::Interrupted);
    }

    #[test]
    fn an_error_with_no_kind_fails_the_run() {
        assert_eq!(kind(std::io::Error::other("disk full")), ErrorKind::Failed);
        assert_eq!(kind(anyhow::anyhow!("something")), ErrorKind::Failed);
        let stalled = workloads::stall::Stalled {
            timeout: std::time::Duration::from_secs(1),
            what: "no operation completed",
        };
        assert_eq!(kind(stalled), ErrorKind::Failed);
    }

    #[test]
    fn the_kind_is_found_under_context() {
        let err = Err::<(), _>(KindedError::from(
            servers::engines::docker::EngineUnavailable("x".into()),
        ))
        .context("failed to start server")
        .context("cell a|b")
        .unwrap_err();
        assert_eq!(error_kind(&err), ErrorKind::NoDocker);
    }

    #[test]
    fn the_outermost_specific_kind_wins() {
        // A refused stored run that is the source of a comparison error: the outer one.
        let err = compare::CompareError::Read {
            path: "run".into(),
            source: Box::new(KindedError::from(UsageError("bad".into()))),
        };
        assert_eq!(error_kind(&err.into()), ErrorKind::BadInput);
        // A cause with no specific kind does not hide one below it.
        let err = servers::redis::control::CommandError::Client {
            command: "PING".into(),
            source: Box::new(KindedError::from(
                servers::engines::docker::EngineUnavailable("x".into()),
            )),
        };
        assert_eq!(error_kind(&err.into()), ErrorKind::NoDocker);
    }

    /// The carrier adds nothing to what is shown: the same text, the same causes.
    #[test]
    fn a_kinded_error_reads_as_the_error_it_carries() {
        let refused = results::check::Refused::Io {
            path: "x".into(),
            source: std::io::Error::other("gone"),
        };
        let err = anyhow::Error::from(refused).context("cell a|b");
        assert_eq!(format!("{err:#}"), "cell a|b: failed to read x: gone");
        assert_eq!(err.chain().count(), 3);
    }
}
