//! The sysbench binary itself (`sysbench`): its options, its report parser, the process
//! (`process`), the iteration on any SQL family it has a driver for (`iteration`) and the
//! kind's checks (`driver`).

pub(crate) mod driver;
pub mod iteration;
pub(crate) mod options;
pub(crate) mod process;
pub(crate) mod report;
pub(crate) mod script;
pub(crate) mod spec;

pub use spec::SysbenchSpec;
