//! redis-benchmark's tests and memtier's mix (`redis`), driven by rmatrix's own client:
//! the spec, the state each iteration starts from (its plan and its sending), the request
//! encoding, the load clients' streams, and the driver (with the spec's checks).

pub(crate) mod driver;
pub(crate) mod prefill;
pub(crate) mod proto;
pub(crate) mod spec;
pub(crate) mod state;
pub(crate) mod stream;

pub(crate) use spec::{RedisSpec, RedisTest, Transport};
