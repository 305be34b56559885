//! Docker engines: where one is (`address`: `DOCKER_HOST`, contexts, hosts files), whether two
//! addresses reach one engine (`identity`), `ssh://` engines through the Docker CLI's way
//! (`ssh`), and the engine through bollard (`docker`), the only module that speaks its API.

pub(crate) mod address;
pub mod docker;
pub(crate) mod identity;
pub(crate) mod ssh;
