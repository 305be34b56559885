//! Recording: the run directory, its results.csv rows and manifest.

pub(crate) mod check;
pub(crate) mod counters;
pub(crate) mod estimate;
pub(crate) mod files;
pub(crate) mod functions;
pub(crate) mod legacy;
pub(crate) mod lock;
pub(crate) mod manifest;
pub(crate) mod operations;
pub(crate) mod own_files;
pub(crate) mod profiles;
pub(crate) mod rundir;
pub mod samples;
pub(crate) mod server_seconds;
pub(crate) mod stored_csv;

pub use crate::model::row::{ResultRow, FORMAT_VERSION};
pub use rundir::RunDir;
