//! `rmatrix clean`: remove what rmatrix left on its engines.

use anyhow::Result;

use crate::error::Outcome;
use crate::servers::engines::Containers as _;

/// `rmatrix clean`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct CleanArgs {
    /// Clean these engines (repeatable, as `run --engine`) instead of the default one.
    #[arg(long = "engine", value_name = "URL")]
    pub(crate) engines: Vec<String>,
    /// Also remove the kept data sets (`datasets: {reuse: true}`): later runs prepare
    /// their tables again.
    #[arg(long)]
    pub(crate) datasets: bool,
    /// Also remove the client images (this binary in a Debian base, built for pooled
    /// runs' client containers): the next such run builds its own again.
    #[arg(long)]
    pub(crate) images: bool,
}

/// `rmatrix clean`: remove every rmatrix container on the engines (the default one if none).
pub(super) async fn clean(args: &CleanArgs) -> Result<Outcome> {
    let CleanArgs {
        engines,
        datasets,
        images,
    } = args;
    let env = crate::servers::engines::address::Env::current();
    let addrs = match engines.is_empty() {
        true => vec![crate::servers::engines::address::from_env(&env)
            .map_err(crate::servers::engines::docker::EngineUnavailable)?],
        false => engines
            .iter()
            .map(|e| crate::servers::engines::address::resolve(&env, e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(crate::servers::engines::docker::EngineUnavailable)?,
    };
    for a in &addrs {
        let engine = crate::servers::engines::docker::Engine::connect_to(a).await?;
        let n = engine.remove_all().await?;
        eprintln!("removed {n} rmatrix container(s) on {}", a.url());
        if *datasets {
            let sets = crate::servers::dataset::list(&engine).await?;
            for (volume, what) in &sets {
                engine.remove_volume(volume).await?;
                eprintln!(
                    "removed data set {volume}: {}",
                    crate::escape::terminal(what)
                );
            }
            eprintln!("removed {} data set(s) on {}", sets.len(), a.url());
        }
        if *images {
            let tags = engine.tags_of(crate::drive::CLIENT_REPO).await?;
            for tag in &tags {
                engine.remove_image(tag).await?;
            }
            eprintln!("removed {} client image(s) on {}", tags.len(), a.url());
        }
    }
    Ok(Outcome::Done)
}
