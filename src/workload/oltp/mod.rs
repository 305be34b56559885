//! sysbench 1.0 OLTP workloads: key distributions, statement texts and event plans, the
//! sbtest schema and its row values. Pure; the driver is `drive::oltp`.

pub mod rand;
pub mod schema;
pub mod sql;
