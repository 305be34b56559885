//! From a commit to a server image: the recipe's toolchain image, a build container with
//! the commit's tree at /src and the compiler cache volume at /ccache, and the run image
//! made of the recipe's `run/` folder, the family's entrypoint and what the build installed.
//! The image is tagged by everything that goes into it, so a commit is built once.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use sha2::{Digest, Sha256};

use super::git::{self, Commit};
use super::source::Recipe;
use crate::servers::engines::docker::{build_context, tail, Engine, ImageInfo};
use crate::servers::engines::{ContainerSpec, Containers as _};

/// The volume every build's ccache lives in.
pub(crate) const CCACHE_VOLUME: &str = "rmatrix-ccache";
/// Lines of a failed build's log given in its message.
const LOG_TAIL_LINES: usize = 25;

/// One server to build: the work tree, the commit, and how.
#[derive(Debug, Clone)]
pub(crate) struct SourceBuild {
    pub(crate) repo: PathBuf,
    /// The revision as the matrix wrote it.
    pub(crate) rev: String,
    pub(crate) commit: Commit,
    pub(crate) recipe: &'static Recipe,
    pub(crate) flags: Vec<String>,
    pub(crate) suite: String,
    /// `containers/source/<folder>`: `build/` and `run/`.
    pub(crate) recipe_dir: PathBuf,
    /// The family's `entrypoint.sh`, added to the run image's context.
    pub(crate) entrypoint: PathBuf,
}

/// What a build made: the image, and how long it took when it was built now.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    pub(crate) image: ImageInfo,
    pub(crate) seconds: Option<f64>,
}

impl SourceBuild {
    /// The build arguments of both images.
    fn args(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("suite".to_string(), self.suite.clone())])
    }

    /// The run image's tag: a hash of the tree, the recipe's files, the entrypoint, the
    /// flags and the suite.
    fn reference(&self) -> Result<String> {
        let args = self.args();
        let (_, toolchain) = build_context(&self.recipe_dir.join("build"), &args)?;
        let (_, run) = build_context(&self.recipe_dir.join("run"), &args)?;
        let entrypoint = std::fs::read(&self.entrypoint)
            .with_context(|| format!("failed to read {}", self.entrypoint.display()))?;
        let mut h = Sha256::new();
        for part in [
            self.commit.tree.as_bytes(),
            self.recipe.name.as_bytes(),
            toolchain.as_bytes(),
            run.as_bytes(),
            &entrypoint,
        ] {
            h.update(part);
            h.update([0]);
        }
        for flag in &self.flags {
            h.update(b"FLAG\0");
            h.update(flag.as_bytes());
            h.update([0]);
        }
        Ok(format!(
            "rmatrix/src-{}:{}",
            self.recipe.name,
            &format!("{:x}", h.finalize())[..16]
        ))
    }

    /// The image of this commit: found when it was built before, else built now.
    /// `run_id`/`instance` label the build container (so an interrupted run removes it).
    pub(crate) async fn ensure(
        &self,
        engine: &Engine,
        run_id: &str,
        instance: &str,
        status: &(dyn Fn(String) + Sync),
    ) -> Result<Built> {
        let reference = self.reference()?;
        if let Some(id) = engine.image_id(&reference).await {
            let image = ImageInfo {
                reference,
                id,
                origin: "cached".into(),
                digest: None,
            };
            return Ok(Built {
                image,
                seconds: None,
            });
        }
        let started = Instant::now();
        let shown = format!("{} ({})", self.commit.describe, &self.commit.commit[..12]);
        status(format!("building toolchain of recipe {}", self.recipe.name));
        let toolchain = engine
            .ensure_built(
                &format!("build-{}-{}", self.recipe.folder, self.suite),
                &self.recipe_dir.join("build"),
                &self.args(),
            )
            .await?;
        let repo = self.repo.clone();
        let commit = self.commit.commit.clone();
        let tree = tokio::task::spawn_blocking(move || git::archive(&repo, &commit))
            .await
            .map_err(|e| anyhow!("git archive: {e}"))??;
        status(format!("building {shown} with recipe {}", self.recipe.name));
        let out = self
            .compile(engine, &toolchain.reference, tree, run_id, instance)
            .await
            .with_context(|| format!("failed to build {shown} with recipe {}", self.recipe.name))?;
        status(format!("making the run image of {shown}"));
        let context = self.run_context(&out)?;
        let mut image = engine
            .build_tar(
                &reference,
                context,
                &self.args(),
                &self.recipe_dir.join("run").display().to_string(),
            )
            .await?;
        image.origin = "built from source".into();
        Ok(Built {
            image,
            seconds: Some(started.elapsed().as_secs_f64()),
        })
    }

    /// Run the build container; the tar of its `/out`.
    async fn compile(
        &self,
        engine: &Engine,
        toolchain: &str,
        tree: Vec<u8>,
        run_id: &str,
        instance: &str,
    ) -> Result<Vec<u8>> {
        let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spec = ContainerSpec {
            name: format!(
                "rmatrix-build-{}-{}",
                &self.commit.commit[..12],
                rand::random::<u32>()
            ),
            image: toolchain.to_string(),
            args: self.flags.clone(),
            env: vec![("JOBS".into(), jobs.to_string())],
            volumes: vec![(CCACHE_VOLUME.into(), "/ccache".into())],
            archive: Some(tree),
            run_id: run_id.to_string(),
            instance: instance.to_string(),
            ..Default::default()
        };
        let id = engine.start(&spec).await?;
        let result = async {
            let code = engine.wait(&id).await?;
            if code != 0 {
                let log = engine.logs(&id).await;
                bail!(
                    "the build exited with {code}; its log's last lines:\n{}",
                    crate::escape::terminal(&tail(&log, LOG_TAIL_LINES))
                );
            }
            engine.download(&id, "/out").await
        }
        .await;
        let _ = engine.remove(&id).await;
        result
    }

    /// The run image's context: the recipe's `run/` files, `entrypoint.sh`, and `out/`.
    fn run_context(&self, out: &[u8]) -> Result<Vec<u8>> {
        let (run, _) = build_context(&self.recipe_dir.join("run"), &self.args())?;
        let entrypoint = std::fs::read(&self.entrypoint)?;
        let mut b = tar::Builder::new(Vec::new());
        copy_entries(&mut b, &run)?;
        let mut header = tar::Header::new_gnu();
        header.set_size(entrypoint.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        b.append_data(&mut header, "entrypoint.sh", entrypoint.as_slice())?;
        copy_entries(&mut b, out)?;
        Ok(b.into_inner()?)
    }
}

/// Append every entry of the tar `from` (files, folders, links) to `to`.
fn copy_entries(to: &mut tar::Builder<Vec<u8>>, from: &[u8]) -> Result<()> {
    let mut archive = tar::Archive::new(from);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let mut header = entry.header().clone();
        match entry.header().entry_type() {
            tar::EntryType::Symlink | tar::EntryType::Link => {
                let target = entry
                    .link_name()?
                    .ok_or_else(|| anyhow!("link {} without a target", path.display()))?
                    .into_owned();
                to.append_link(&mut header, &path, &target)?;
            }
            _ => to.append_data(&mut header, &path, &mut entry)?,
        }
    }
    Ok(())
}
