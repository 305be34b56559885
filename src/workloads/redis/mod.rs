//! redis-benchmark's tests and memtier's mix (`redis`), driven by rmatrix's own client:
//! the spec and its checks, the request encoding, and the driver.

pub mod driver;
pub mod proto;
pub mod spec;

pub use spec::{KeyDistribution, Ratio, RedisSpec, RedisTest, Transport};
