//! The bottom layer: plain data shared by every stage (a cell and its dimensions, a results
//! row, the metrics read from it). Nothing here imports a module of a higher layer.

pub mod cell;
pub mod curve;
pub mod metric;
pub mod row;

pub use cell::{slug, Cell, CellKey, Dimension};
pub use metric::Metric;
pub use row::{ResultRow, Status, FORMAT_VERSION};
