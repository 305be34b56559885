//! The checks of a parsed matrix, block by block, each reported at its place in the file.
//! The order is fixed: with several problems, the same one is reported first every time.

use super::MatrixError;
use crate::input::span::{Pos, SpanIndex};
use crate::matrix::model::Matrix;
use crate::matrix::plan::Plan;

pub(super) struct Validator<'a> {
    pub(super) file: &'a str,
    pub(super) spans: &'a SpanIndex,
    pub(super) m: &'a Matrix,
}

/// "a, b, c", for the valid choices of a message.
pub(super) fn choices<'a>(it: impl IntoIterator<Item = &'a String>) -> String {
    it.into_iter()
        .map(|s| crate::escape::terminal(s))
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

    /// Every check that needs only the matrix itself and its expansion (not its folders),
    /// and that expansion, made once when the axes are known to be in bounds.
    pub(super) fn check(&self) -> Result<Plan, MatrixError> {
        self.check_axes_present()?;
        self.check_names()?;
        self.check_timing()?;
        self.check_axes_size()?;
        self.check_rules()?;
        self.check_report()?;
        self.check_load()?;
        let plan = crate::matrix::plan::expand(self.m, &[]);
        self.check_workloads(&plan)?;
        self.check_untrusted()?;
        Ok(plan)
    }
}
