//! The sysbench binary itself (`sysbench`): its options, its report parser and the driver.

pub mod driver;
pub mod options;
pub mod report;
pub mod spec;

pub use spec::SysbenchSpec;
