//! sysbench 1.0's OLTP tests (`oltp`), driven by rmatrix's own client: key distributions,
//! statement texts and event plans, the sbtest schema, and the driver (load the tables once,
//! then workers with one connection each send per-second stats to one collector), on any SQL
//! family: its connections, dialect, load and counters are its `servers::sql::SqlFamily`.

pub(crate) mod collector;
pub mod driver;
pub(crate) mod phase;
pub mod prepare;
pub(crate) mod rand;
pub(crate) mod schema;
pub(crate) mod session;
pub(crate) mod spec;
pub(crate) mod sql;
pub(crate) mod unique;
pub(crate) mod worker;

pub use spec::{OltpSpec, OltpTest, RandType};
