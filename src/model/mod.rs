//! The bottom layer: plain data shared by every stage (a results row, the metrics read from
//! it, the dimensions of a matrix). Nothing here imports another module of the crate.

pub mod metric;
pub mod row;

pub use metric::Metric;
pub use row::{ResultRow, FORMAT_VERSION};
