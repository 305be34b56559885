//! The `oltp` tests on PostgreSQL, in sysbench's pgsql dialect: the sbtest DDL and COPY rows
//! (`schema`), the load (`prepare`), a client connection (`session`), oltp_insert's kept id
//! sequence (`unique`) and the iteration with its counters read around the measured phase
//! (`run`).

pub(crate) mod prepare;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod session;
pub(crate) mod unique;
