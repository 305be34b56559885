//! The pgbench binary itself (`pgbench`): its options, its report and transaction log, and
//! the driver. PostgreSQL only.

pub(crate) mod driver;
pub(crate) mod report;
pub(crate) mod spec;

pub(crate) use spec::PgbenchSpec;
