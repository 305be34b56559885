//! The matrix: the file's model, validation with positions, and pure expansion into cells.

mod axis;
pub mod load;
pub mod model;
pub mod pacing;
pub mod plan;
pub mod schedule;

pub use crate::input::Length;
pub use load::{load_file, load_for_client, load_str, LoadedMatrix, MatrixError};
pub use model::*;
pub use plan::{expand, Cell, Deployment, Plan};

impl crate::error::Kinded for MatrixError {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::BadInput
    }
}
