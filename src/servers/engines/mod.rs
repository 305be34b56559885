//! Container engines: what a server's container needs of one (`containers`: the `Containers`
//! trait and `ContainerSpec`), where a Docker engine is (`address`: `DOCKER_HOST`, contexts,
//! hosts files), whether two addresses reach one engine (`identity`), `ssh://` engines through
//! the Docker CLI's way (`ssh`), and the engine through bollard (`docker`), the only module
//! that speaks Docker's API; a double of `Containers` for unit tests (`double`).

pub(crate) mod address;
pub mod containers;
pub mod docker;
#[cfg(test)]
pub(crate) mod double;
pub(crate) mod identity;
pub(crate) mod ssh;

pub use containers::{ContainerSpec, Containers};
