//! mysqlslap's auto-generated workloads (`slap`), driven by rmatrix's own client.

pub(crate) mod client;
pub(crate) mod driver;
pub(crate) mod spec;
pub(crate) mod sql;

pub(crate) use spec::SlapSpec;
