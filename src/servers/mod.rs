//! Provisioning: Docker engines (`engines/`), the images made here (`images/`), and the server
//! families (one folder each, `Family` in `family.rs`, listed in `kind.rs`): config rendering,
//! readiness and verification.

pub(crate) mod check;
pub(crate) mod config;
pub mod dataset;
pub(crate) mod deployed;
pub mod engines;
pub mod family;
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
    engine: Option<&engines::docker::Engine>,
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
