//! A matrix's parameters applied to its text before it is read (`input::params` does the
//! work): the environment as their second source, their errors as the matrix's.

use indexmap::IndexMap;

use super::MatrixError;
use crate::input::params::{self, ParamError};
use crate::input::span::SpanIndex;

/// What a syntax error right after an unquoted `${` in a flow collection means.
const QUOTE_IT: &str = "a `${name}` inside `[...]` or `{...}` must be quoted, as in \
                        `[\"${name}\"]`: unquoted, YAML reads it as `$` and a mapping";

/// `text` with its references substituted, and the value of each parameter it declares (in
/// their order). A text that is too large or does not parse is returned as it is, for the
/// matrix's own reading to report.
pub(super) fn apply(
    text: &str,
    file: &str,
    set: &[(String, String)],
) -> Result<(String, IndexMap<String, String>), MatrixError> {
    let fail = |line, col, message| MatrixError {
        file: file.to_string(),
        line,
        col,
        message,
    };
    if text.len() as u64 > crate::input::yaml::MAX_FILE_BYTES {
        return Ok((text.to_string(), IndexMap::new()));
    }
    let spans = SpanIndex::build(text);
    if let Some(s) = &spans.syntax {
        if params::unquoted_reference(text, s.pos) {
            // At the `$`, not at the `{` the parser stopped on.
            return Err(fail(s.pos.line, s.pos.col - 1, QUOTE_IT.into()));
        }
    }
    if spans.syntax.is_some() || spans.is_empty() {
        return Ok((text.to_string(), IndexMap::new()));
    }
    let convert = |e: ParamError| match e {
        ParamError::At(pos, m) => fail(pos.line, pos.col, m),
        ParamError::Value(m) => fail(0, 0, m),
        ParamError::Elsewhere => fail(0, 0, "failed to read the matrix's parameters".into()),
    };
    let declared = match params::declared(text, &spans) {
        Ok(d) => d,
        // What the untyped first look refused outside `params:` is the typed reading's to
        // judge; its declarations are checked with the rest of the matrix.
        Err(ParamError::Elsewhere) => super::read::parse(text, file)?.0.params,
        Err(e) => return Err(convert(e)),
    };
    let values = params::values(&declared, set, &env).map_err(convert)?;
    let resolved = params::substitute(text, &declared, &values).map_err(convert)?;
    Ok((resolved, values))
}

/// `RMATRIX_PARAM_<name>` as this process has it (`Err`: not UTF-8).
fn env(var: &str) -> Result<Option<String>, ()> {
    match std::env::var(var) {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(()),
    }
}

/// The `--set NAME=VALUE` arguments as pairs (a usage error without `=`).
pub fn parse_set(args: &[String]) -> Result<Vec<(String, String)>, crate::error::UsageError> {
    args.iter()
        .map(|a| {
            params::split_set(a).ok_or_else(|| {
                crate::error::UsageError(format!(
                    "--set {}: expected NAME=VALUE, e.g. --set rev=HEAD",
                    crate::escape::terminal(a)
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{load_resumed, load_stored, load_str};
    use super::*;

    const MATRIX: &str = "\
params:
  rev: {default: HEAD, description: the commit to build}
  iters: {type: int, default: 2}
  fast: {type: bool}
name: run-${rev}
servers: {db: {image: \"mariadb:11\"}}
workloads: {w: {slap: {load_type: write}}}
concurrency: [\"${iters}\", 8]
iterations: ${iters}
length: 100
engines: [InnoDB]
";

    fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn load(text: &str, pairs: &[(&str, &str)]) -> Result<super::super::LoadedMatrix, MatrixError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, text).unwrap();
        let loaded = super::super::load_file_set(&path, &set(pairs));
        loaded.map_err(|mut e| {
            e.file = "m.yaml".into();
            e
        })
    }

    #[test]
    fn the_resolved_text_is_read_stored_and_hashed() {
        let l = load(MATRIX, &[("fast", "true"), ("rev", "abc1234")]).unwrap();
        assert_eq!(l.matrix.name.as_deref(), Some("run-abc1234"));
        assert_eq!(l.matrix.concurrency, [2, 8]);
        assert_eq!(l.matrix.iterations, 2);
        let params: Vec<_> = l.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(params, ["rev=abc1234", "iters=2", "fast=true"]);
        assert!(l.text.contains("name: \"run-abc1234\"\n") && !l.text.contains("${"));
        assert!(l.text.starts_with("params:\n  rev: {default: HEAD"));
        assert_eq!(l.text.lines().count(), MATRIX.lines().count());
        use sha2::{Digest, Sha256};
        assert_eq!(l.sha256, format!("{:x}", Sha256::digest(l.text.as_bytes())));
        // The stored copy loads as it is, its values being in the manifest: for a report,
        // a resume, and as a matrix again (nothing left to substitute).
        let copy = tempfile::tempdir().unwrap();
        let path = copy.path().join("matrix.yaml");
        std::fs::write(&path, &l.text).unwrap();
        let stored = load_stored(&path).unwrap();
        assert_eq!(stored.matrix.name, l.matrix.name);
        assert!(stored.params.is_empty());
        let resumed = load_resumed(&l.text, Path::new("m.yaml")).unwrap();
        assert_eq!(
            (resumed.text.as_str(), resumed.sha256.as_str()),
            (l.text.as_str(), l.sha256.as_str())
        );
        let again = load(&l.text, &[("fast", "true")]).unwrap();
        assert_eq!(again.text, l.text);
    }

    #[test]
    fn later_errors_keep_their_line() {
        let text = MATRIX.replace("length: 100", "length: 100\niteratons: 3");
        let e = load(&text, &[("fast", "true"), ("rev", "a: b # c")]).unwrap_err();
        assert_eq!((e.line, e.col), (11, 1), "{e}");
        let text = MATRIX.replace("iterations: ${iters}", "iterations: x${iters}");
        let e = load(&text, &[("fast", "true")]).unwrap_err();
        assert_eq!((e.line, e.col), (9, 13), "{e}");
        assert!(e.message.contains("not `\"x2\"`"), "{e}");
    }

    #[test]
    fn bad_values_and_references_are_the_matrixs_errors() {
        let e = load(MATRIX, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.yaml: parameter `fast` has no value and no default: give it with `--set \
             fast=VALUE` or the environment variable RMATRIX_PARAM_fast"
        );
        let e = load(MATRIX, &[("fast", "true"), ("iter", "3")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.yaml: --set iter: the matrix declares no parameter `iter`; declared: rev, iters, fast"
        );
        let e = load(MATRIX, &[("fast", "true"), ("iters", "many")]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("m.yaml: --set iters: parameter `iters` is an int"),
            "{e}"
        );
        let e = load(&MATRIX.replace("[\"${iters}\", 8]", "[${iters}, 8]"), &[]).unwrap_err();
        assert_eq!((e.line, e.col), (8, 15), "{e}");
        assert_eq!(e.message, QUOTE_IT);
        let e = load(
            &MATRIX.replace("run-${rev}", "run-${revision}"),
            &[("fast", "true")],
        )
        .unwrap_err();
        assert_eq!((e.line, e.col), (5, 7), "{e}");
        // A matrix without `params:` that writes `${` is told so.
        let e = load_str("name: ${x}\n", Path::new("m.yaml")).unwrap_err();
        assert!(
            e.message
                .ends_with("the matrix declares no parameters (`params:`)"),
            "{e}"
        );
        // Not a matrix at all: the matrix's own message, not the parameters'.
        let e = load("[1, 2]\n", &[]).unwrap_err();
        assert_eq!(e.message, "the matrix must be a mapping, not a list");
        assert_eq!(
            parse_set(&["rev".into()]).unwrap_err().to_string(),
            "--set rev: expected NAME=VALUE, e.g. --set rev=HEAD"
        );
    }
}
