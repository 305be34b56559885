//! The sysbench binary itself (`sysbench`): its options, its report parser and the driver.

pub mod driver;
pub(crate) mod options;
pub(crate) mod report;
pub(crate) mod script;
pub(crate) mod spec;

pub use spec::SysbenchSpec;
