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
pub use error::{ErrorKind, Kinded, UsageError};

/// Ctrl-C (`run::Interrupted` is the application's; its kind is given here, at the top).
impl Kinded for run::Interrupted {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Interrupted
    }
}

/// The error types whose kind may be other than `Failed`: `kind_of` tries each. Every error
/// type in `src/` implements `Kinded`; a test reads `src/` and fails when one does not, or
/// when an impl names another kind than `Failed` and its type is missing here.
macro_rules! kinded_errors {
    ($($t:ty),+ $(,)?) => {
        /// The kind of `cause` when it is one of the crate's error types.
        fn kind_of(cause: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
            $(
                if let Some(e) = cause.downcast_ref::<$t>() {
                    return Some(Kinded::kind(e));
                }
            )+
            None
        }

        #[cfg(test)]
        const KINDED_ERRORS: &[&str] = &[$(stringify!($t)),+];
    };
}

kinded_errors![
    error::UsageError,
    input::file::FileError,
    matrix::MatrixError,
    results::check::Refused,
    compare::CompareError,
    compare::EnvDiffers,
    servers::engines::docker::EngineUnavailable,
    store::StoreError,
    run::Interrupted,
];

/// The kind of an error chain: its first cause that says more than "failed".
pub fn error_kind(err: &anyhow::Error) -> ErrorKind {
    err.chain()
        .filter_map(kind_of)
        .find(|k| *k != ErrorKind::Failed)
        .unwrap_or(ErrorKind::Failed)
}

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
        let err = Err::<(), _>(servers::engines::docker::EngineUnavailable("x".into()))
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
            source: Box::new(UsageError("bad".into())),
        };
        assert_eq!(error_kind(&err.into()), ErrorKind::BadInput);
        // A cause with no specific kind does not hide one below it.
        let err = servers::redis::control::CommandError::Client {
            command: "PING".into(),
            source: Box::new(servers::engines::docker::EngineUnavailable("x".into())),
        };
        assert_eq!(error_kind(&err.into()), ErrorKind::NoDocker);
    }

    /// `src/` without its `#[cfg(test)]` modules: (file, text).
    fn sources() -> Vec<(String, String)> {
        fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .expect("src/ is readable")
                .map(|e| e.expect("src/ entry").path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("source is UTF-8");
                    let tests = text
                        .match_indices("#[cfg(test)]")
                        .find(|(i, m)| text[i + m.len()..].trim_start().starts_with("mod "));
                    let code = match tests {
                        Some((i, _)) => text[..i].to_string(),
                        None => text,
                    };
                    out.push((path.display().to_string(), code));
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut out,
        );
        out
    }

    /// The identifier that starts `s`.
    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }

    /// Names of the error types declared in `code`: a derive naming `Error`, or an
    /// `impl std::error::Error for`.
    fn declared_errors(code: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut derive_error = false;
        for line in code.lines().map(str::trim) {
            if line.starts_with("#[derive(") {
                derive_error |= line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "Error");
                continue;
            }
            if let Some(rest) = line.split("impl std::error::Error for ").nth(1) {
                names.push(ident(rest).to_string());
            }
            // The derive's item is the next struct or enum: attributes (`#[error(...)]` over
            // several lines too) and doc comments come between.
            let item = line
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            for keyword in ["struct ", "enum "] {
                if let Some(rest) = item.strip_prefix(keyword) {
                    if derive_error {
                        names.push(ident(rest).to_string());
                    }
                    derive_error = false;
                }
            }
        }
        names
    }

    /// Each `impl ... Kinded for T { ... }` in `code`: T's name and whether its body names
    /// a kind other than `Failed`.
    fn kinded_impls(code: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for (i, _) in code.match_indices("Kinded for ") {
            let path = &code[i + "Kinded for ".len()..];
            let path = &path[..path.find([' ', '{']).unwrap_or(path.len())];
            let name = path.rsplit("::").next().unwrap_or(path).to_string();
            let body_start = i + code[i..].find('{').expect("an impl has a body");
            let mut depth = 0;
            let mut body_end = code.len();
            for (j, c) in code[body_start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    body_end = body_start + j;
                    break;
                }
            }
            let body = &code[body_start..body_end];
            let specific = body
                .match_indices("ErrorKind::")
                .any(|(k, _)| ident(&body[k + "ErrorKind::".len()..]) != "Failed");
            out.push((name, specific));
        }
        out
    }

    #[test]
    fn every_error_type_is_kinded_and_registered() {
        let registered: Vec<&str> = KINDED_ERRORS
            .iter()
            .map(|t| t.rsplit("::").next().unwrap_or(t).trim())
            .collect();
        let files = sources();
        let impls: Vec<(String, bool)> = files.iter().flat_map(|(_, c)| kinded_impls(c)).collect();
        let mut declared = Vec::new();
        for (file, code) in &files {
            for name in declared_errors(code) {
                declared.push(name.clone());
                assert!(
                    impls.iter().any(|(n, _)| *n == name),
                    "{file}: error type `{name}` does not implement error::Kinded: \
                     say which kind of failure it is (ErrorKind::Failed for exit code 1)"
                );
            }
        }
        for (name, specific) in &impls {
            assert!(
                !specific || registered.contains(&name.as_str()),
                "`{name}` has a kind other than Failed but is not in lib.rs's kinded_errors!"
            );
        }
        // The scan sees the types it must (a broken scan would pass vacuously).
        for name in registered {
            assert!(
                declared.iter().any(|d| d == name),
                "the scan of src/ missed `{name}`; found {declared:?}"
            );
        }
        assert!(
            declared.iter().any(|d| d == "Stalled"),
            "found {declared:?}"
        );
    }

    #[test]
    fn the_scan_finds_derived_and_hand_written_errors() {
        let code = "#[derive(Debug, thiserror::Error)]\n#[error(\"x\")]\npub struct A;\n\
                    #[derive(Debug, Clone)]\npub struct NotAnError;\n\
                    impl std::error::Error for B {}\n\
                    #[derive(thiserror::Error, Debug)]\n#[error(\n    \"x {}\",\n    .0\n)]\n\
                    /// doc\npub(crate) enum C {}\n";
        assert_eq!(declared_errors(code), ["A", "B", "C"]);
        let impls = "impl Kinded for x::A { fn kind(&self) -> ErrorKind { ErrorKind::Failed } }\n\
                     impl crate::error::Kinded for B {\n fn kind(&self) -> ErrorKind {\n \
                     match self { _ => ErrorKind::BadInput } } }";
        assert_eq!(
            kinded_impls(impls),
            [("A".to_string(), false), ("B".to_string(), true)]
        );
    }
}
