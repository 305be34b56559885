//! The matrix: YAML model, validation with positions, and pure expansion into cells.

pub mod length;
pub mod load;
pub mod model;
pub mod oltp;
pub mod plan;
pub mod redis_spec;
pub mod schedule;
pub mod span;
pub mod untrusted;
pub mod yaml;

pub use length::Length;
pub use load::{load_file, load_str, LoadedMatrix, MatrixError};
pub use model::*;
pub use plan::{expand, Cell, Deployment, Plan};
