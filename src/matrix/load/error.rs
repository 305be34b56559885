//! A bad matrix: where, what, and what would be valid.

use std::fmt;

/// A bad matrix: where, what, and what would be valid.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixError {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) message: String,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            // About the whole file (unreadable, too large): no position to give.
            0 => write!(f, "{}: {}", self.file, self.message),
            _ => write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.col, self.message
            ),
        }
    }
}
