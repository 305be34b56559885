//! Provisioning: Docker through bollard, config rendering, readiness and verification.

pub(crate) mod address;
pub(crate) mod build;
pub(crate) mod check;
pub(crate) mod config;
pub(crate) mod counted;
pub mod dataset;
pub(crate) mod deployed;
pub mod docker;
pub mod family;
pub(crate) mod git;
pub(crate) mod identity;
pub(crate) mod kind;
pub(crate) mod maps;
pub mod mysql;
pub(crate) mod packages;
pub(crate) mod postgres;
pub(crate) mod redis;
pub(crate) mod registry;
pub(crate) mod seal;
pub(crate) mod source;
pub mod spec;
pub(crate) mod ssh;

pub use deployed::{Deployed, Endpoint, Launch};

use std::path::Path;

use anyhow::Result;

use spec::{ConfigSpec, ServerSpec};

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
    let family = spec.kind().family();
    let mut deployed = match (&spec.external, launch) {
        (Some(ext), _) => family::attach(family, ext, config).await?,
        (None, Some(launch)) => family::start(family, launch, name, image, config, dir).await?,
        (None, None) => anyhow::bail!("invariant: a container server needs the Docker engine"),
    };
    family.confirm(spec, &mut deployed);
    Ok(deployed)
}

/// Save the server log and remove the container (nothing for an external server).
pub(crate) async fn teardown(
    engine: Option<&docker::Engine>,
    deployed: &Deployed,
    dir: &Path,
) -> Result<()> {
    match (engine, &deployed.container) {
        (Some(engine), Some(id)) => {
            let log = engine.logs(id).await;
            std::fs::write(dir.join("server.log"), log)?;
            engine.remove(id).await?;
            family::remove_socket_dir(dir)?;
            match &deployed.data_volume {
                Some(v) => engine.remove_volume(v).await,
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}
