//! Recording: the run directory, its results.csv rows and manifest.

pub mod check;
pub mod manifest;
pub mod operations;
pub mod rundir;
pub mod samples;

pub use crate::model::row::{ResultRow, FORMAT_VERSION};
pub use rundir::RunDir;
