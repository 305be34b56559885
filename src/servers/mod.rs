//! Provisioning: Docker through bollard, config rendering, readiness and verification.

pub mod deployed;
pub mod docker;
pub mod mysql;
pub mod redis;
pub mod spec;

pub use deployed::{Deployed, Endpoint, Launch};

use std::path::Path;

use anyhow::Result;

use spec::{ConfigSpec, ServerKind, ServerSpec};

/// Start (or attach to) the server of one deployment and verify its config.
/// `image` is the image reference for container servers.
pub async fn provision(
    spec: &ServerSpec,
    launch: Option<&Launch<'_>>,
    name: &str,
    image: &str,
    config: &ConfigSpec,
    dir: &Path,
) -> Result<Deployed> {
    match (spec.kind(), &spec.external, launch) {
        (ServerKind::Mysql, Some(ext), _) => mysql::attach(ext, config).await,
        (ServerKind::Mysql, None, Some(launch)) => {
            mysql::start(launch, name, image, config, dir).await
        }
        (ServerKind::Redis, Some(ext), _) => redis::attach(ext, config).await,
        (ServerKind::Redis, None, Some(launch)) => {
            redis::start(launch, name, image, config, dir).await
        }
        (_, None, None) => anyhow::bail!("invariant: a container server needs the Docker engine"),
    }
}

/// Save the server log and remove the container (nothing for an external server).
pub async fn teardown(
    engine: Option<&docker::Engine>,
    deployed: &Deployed,
    dir: &Path,
) -> Result<()> {
    match engine {
        Some(engine) => mysql::stop(engine, deployed, dir).await,
        None => Ok(()),
    }
}
