//! From a file to a parsed `Matrix` and the positions of its keys and values: size limits,
//! UTF-8, YAML syntax and serde's errors, each with the line and column where it occurs.

use std::path::Path;

use super::MatrixError;
use crate::input::file::FileError;
use crate::input::span::SpanIndex;
use crate::input::yaml::MAX_FILE_BYTES;
use crate::matrix::model::{Matrix, WORKLOAD_KINDS};

/// The text of the matrix file at `path`, refused when too large or not UTF-8.
pub(super) fn read_file(path: &Path) -> Result<String, MatrixError> {
    let file = path.display().to_string();
    let fail = |line, col, message| MatrixError {
        file: file.clone(),
        line,
        col,
        message,
    };
    // The one capped reader: `/dev/zero` or a log file is refused at once.
    let bytes =
        crate::input::file::read(path, crate::input::file::MATRIX).map_err(|e| match e {
            FileError::TooLarge { .. } => fail(
                0,
                0,
                format!(
                    "the matrix file is larger than {MAX_FILE_BYTES} bytes (1 MiB): a matrix is a \
                 few KiB of YAML"
                ),
            ),
            FileError::Io { source, .. } => {
                fail(0, 0, format!("failed to read the matrix file: {source}"))
            }
            FileError::NotRegular { kind, .. } => fail(
                0,
                0,
                format!(
                    "not a regular file ({kind}): rmatrix reads a matrix from a regular file only"
                ),
            ),
        })?;
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let good = std::str::from_utf8(good).unwrap_or_default();
        let line = good.matches('\n').count() + 1;
        let col = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        fail(
            line,
            col,
            "the matrix file is not UTF-8 text (an invalid byte here)".into(),
        )
    })
}

/// The geometric steps' numbers, which the matrix holds as the levels they make.
const GEOMETRIC: [(&str, &str, bool); 6] = [
    ("concurrency.from", "1", false),
    ("concurrency.factor", "2", true),
    ("concurrency.to", "512", false),
    ("load.rate.from", "1000", false),
    ("load.rate.factor", "2", true),
    ("load.rate.to", "8000", false),
];

/// The matrix in `text` and the positions of its keys and values (named `file` in errors).
pub(super) fn parse(text: &str, file: &str) -> Result<(Matrix, SpanIndex), MatrixError> {
    let fail = |line, col, message| MatrixError {
        file: file.to_string(),
        line,
        col,
        message,
    };
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(
            0,
            0,
            format!("the matrix is larger than {MAX_FILE_BYTES} bytes (1 MiB)"),
        ));
    }
    let spans = SpanIndex::build(text);
    if let Some(syntax) = &spans.syntax {
        return Err(fail(
            syntax.pos.line,
            syntax.pos.col,
            crate::input::yaml::syntax(syntax),
        ));
    }
    if spans.is_empty() {
        return Err(fail(
            1,
            1,
            "the matrix file is empty: it needs at least `servers`, `workloads` and `length`"
                .into(),
        ));
    }
    let matrix = crate::input::yaml::from_str::<Matrix>(text).map_err(|e| {
        let (pos, message) = crate::input::yaml::describe(&e, &spans, text, WORKLOAD_KINDS);
        fail(pos.line, pos.col, message)
    })?;
    // The matrix as it was read, to look its numbers up in the text.
    if let Ok(value) = serde_json::to_value(&matrix) {
        crate::input::numbers::check(&value, &spans)
            .map_err(|(pos, message)| fail(pos.line, pos.col, message))?;
    }
    crate::input::numbers::check_paths(&spans, &GEOMETRIC)
        .map_err(|(pos, message)| fail(pos.line, pos.col, message))?;
    Ok((matrix, spans))
}
