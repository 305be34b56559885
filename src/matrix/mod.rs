//! The matrix: the file's model, validation with positions, and pure expansion into cells.

mod axis;
pub(crate) mod load;
pub(crate) mod model;
pub(crate) mod only;
pub(crate) mod pacing;
pub mod plan;
pub(crate) mod schedule;
pub mod schema;

pub use crate::input::Length;
pub use load::{
    load_file, load_file_set, load_for_client, load_str, parse_set, LoadedMatrix, MatrixError,
};
pub(crate) use load::{load_resumed, load_stored};
pub use model::*;
pub use plan::{expand, Cell, Deployment, Plan};

impl crate::error::Kinded for MatrixError {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::BadInput
    }
}

crate::error::kinded!(MatrixError);
