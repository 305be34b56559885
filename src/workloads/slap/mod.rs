//! mysqlslap's auto-generated workloads (`slap`), driven by rmatrix's own client.

pub mod client;
pub mod driver;
pub mod spec;
pub mod sql;

pub use spec::{LoadType, PrimaryKey, SlapSpec};
