//! Provisioning: Docker engines (`engines/`), the images made here (`images/`), and the server
//! families (one folder each, `Family` in `family.rs`, listed in `kind.rs`): config rendering,
//! readiness and verification.

pub(crate) mod check;
pub(crate) mod config;
pub mod dataset;
pub(crate) mod deployed;
pub mod engines;
pub mod family;
#[cfg(test)]
mod family_tests;
pub(crate) mod images;
pub(crate) mod kind;
pub(crate) mod maps;
pub mod mysql;
pub(crate) mod postgres;
pub(crate) mod redis;
pub(crate) mod registry;
pub(crate) mod seal;
pub mod spec;
pub(crate) mod sql;

pub use deployed::{Deployed, Endpoint, Launch};

use std::path::Path;

use anyhow::Result;

use engines::Containers;
use spec::{ConfigSpec, ServerSpec};

/// Start the server of one deployment in a container on `engine` (or attach to it, where the
/// matrix says it is external) and verify its config. `image` is the container's image.
pub async fn provision(
    spec: &ServerSpec,
    engine: &impl Containers,
    launch: &Launch<'_>,
    name: &str,
    image: &str,
    config: &ConfigSpec,
    dir: &Path,
) -> Result<Deployed> {
    if spec.external.is_some() {
        return attach(spec, config).await;
    }
    let family = spec.kind().family();
    let mut deployed = family::start(engine, family, launch, name, image, config, dir).await?;
    family.confirm(spec, &mut deployed);
    Ok(deployed)
}

/// Attach to the external server of one deployment and verify its config.
pub async fn attach(spec: &ServerSpec, config: &ConfigSpec) -> Result<Deployed> {
    let Some(ext) = &spec.external else {
        anyhow::bail!("invariant: only an external server is attached to");
    };
    let family = spec.kind().family();
    let mut deployed = family::attach(family, ext, config).await?;
    family.confirm(spec, &mut deployed);
    Ok(deployed)
}

/// Save the server log and remove the container and its data volume (nothing for an
/// external server).
pub(crate) async fn teardown(
    engine: Option<&impl Containers>,
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
