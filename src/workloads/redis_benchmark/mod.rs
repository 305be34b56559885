//! The redis-benchmark binary itself (`redis_benchmark`): its spec and driver.

pub(crate) mod driver;
pub(crate) mod spec;

pub(crate) use spec::RedisBenchmarkSpec;
