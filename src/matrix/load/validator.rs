//! The checks of a parsed matrix, block by block, each reported at its place in the file.
//! The order is fixed: with several problems, the same one is reported first every time.

use super::MatrixError;
use crate::input::span::{Pos, SpanIndex};
use crate::matrix::model::Matrix;

pub(super) struct Validator<'a> {
    pub(super) file: &'a str,
    pub(super) spans: &'a SpanIndex,
    pub(super) m: &'a Matrix,
}

/// "a, b, c", for the valid choices of a message.
pub(super) fn choices<'a>(it: impl IntoIterator<Item = &'a String>) -> String {
    it.into_iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Validator<'_> {
    pub(super) fn err_at(&self, pos: Pos, message: String) -> MatrixError {
        MatrixError {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            message,
        }
    }

    /// An error at the value under `path` (e.g. `configs.on.mycnf.log_bin`).
    pub(super) fn err(&self, path: &str, message: String) -> MatrixError {
        self.err_at(self.spans.find(path), message)
    }

    /// Every check that needs only the matrix itself (not its expansion or its folders).
    pub(super) fn check(&self) -> Result<(), MatrixError> {
        self.check_axes_present()?;
        self.check_timing()?;
        self.check_axes_size()?;
        self.check_rules()?;
        self.check_report()?;
        self.check_load()?;
        self.check_workloads()?;
        self.check_untrusted()
    }
}
