//! redis-benchmark's tests and memtier's mix (`redis`), driven by rmatrix's own client:
//! the spec and its checks, the state each iteration starts from (its plan and its sending),
//! the request encoding, the load clients' streams, and the driver.

pub(crate) mod driver;
pub(crate) mod prefill;
pub(crate) mod proto;
pub(crate) mod spec;
pub(crate) mod state;
pub(crate) mod stream;

pub(crate) use spec::{RedisSpec, RedisTest, Transport};
