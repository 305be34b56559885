//! The native sysbench-class driver: load the sbtest tables once, then workers (one
//! connection each) run events and send per-second stats over a channel to one collector.

pub mod collector;
pub mod prepare;
pub mod run;
pub mod worker;

pub use run::run_iteration;
