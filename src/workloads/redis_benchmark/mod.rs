//! The redis-benchmark binary itself (`redis_benchmark`): its spec and driver.

pub mod driver;
pub mod spec;

pub use spec::RedisBenchmarkSpec;
