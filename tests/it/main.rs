//! The integration tests, linked once: the real binary against real servers (Docker), stored
//! run directories and the bad-input corpus. Run with `--test-threads=1`: one server at a
//! time on a 2-core machine. One module per file; `common` holds their helpers.

mod common;

mod bad_inputs;
mod bisect_input;
mod client_bound;
mod compare;
mod compare_docker;
mod compare_input;
mod counted;
mod datasets;
mod editor_support;
mod end_to_end;
mod exporters;
mod faults;
mod faults_resume;
mod faults_server;
mod hostile;
mod html_report;
mod images;
mod junit_readers;
mod mysql;
mod network;
mod nightly;
mod oltp;
mod open_loop;
mod plan;
mod pool;
mod postgres;
mod postgres_oltp;
mod profile;
mod redis;
mod redis_state;
mod schema_validator;
mod server_seconds;
mod source;
mod sqlbench;
mod store;
mod store_input;
mod tpcc;
