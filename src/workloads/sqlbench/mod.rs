//! sql-bench's operation suite (`sqlbench`), driven by rmatrix's own client: the test groups
//! of MySQL's "Benchmark DBD suite" (`sql-bench/test-*.sh`) with their operation names, SQL
//! shapes and loop counts, each operation timed and its server counters read around it.
//!
//! `spec` holds the options and their sizes, `plan` what an operation is made of, `groups/`
//! one file per test group (pure: the statements to send), `session` sends them and measures
//! each operation, `driver` runs one iteration of the whole suite.

pub mod driver;
pub mod groups;
pub(crate) mod plan;
pub(crate) mod session;
pub(crate) mod spec;

pub use spec::{Group, Prepare, Size, SqlbenchSpec, Transport};
