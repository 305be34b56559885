//! redis-benchmark's tests and memtier's mix (`redis`), driven by rmatrix's own client:
//! the spec and its checks, the request encoding, the load clients' streams, and the driver.

pub mod driver;
pub mod proto;
pub mod spec;
pub mod stream;

pub use spec::{KeyDistribution, Ratio, RedisSpec, RedisTest, Transport};
