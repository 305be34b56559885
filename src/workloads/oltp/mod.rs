//! sysbench 1.0's OLTP tests (`oltp`), driven by rmatrix's own client: key distributions,
//! statement texts and event plans, the sbtest schema, and the driver (load the tables once,
//! then workers with one connection each send per-second stats to one collector).

pub mod collector;
pub mod driver;
pub mod prepare;
pub mod rand;
pub mod schema;
pub mod spec;
pub mod sql;
pub mod worker;

pub use spec::{OltpSpec, OltpTest, RandType};
