//! The sysbench binary itself (`sysbench`): its options, its report parser, the process
//! (`process`) and the driver (`driver`; against PostgreSQL, its pgsql driver: `pg`).

pub mod driver;
pub(crate) mod options;
pub(crate) mod pg;
pub(crate) mod process;
pub(crate) mod report;
pub(crate) mod script;
pub(crate) mod spec;

pub use spec::SysbenchSpec;
