//! The bottom layer: plain data shared by every stage (a cell and its dimensions, a results
//! row, the metrics read from it). Nothing here imports a module of a higher layer.

pub(crate) mod cell;
pub(crate) mod curve;
pub(crate) mod metric;
pub(crate) mod plausible;
pub(crate) mod row;

pub use cell::{slug, Cell, CellKey, Dimension};
pub use row::{ResultRow, Status};
