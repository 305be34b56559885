//! An image built from a folder under containers/ (`build:`), with a build's own packages
//! installed over it (`packages:`): built once per content, then found by its tag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use sha2::{Digest, Sha256};

use crate::servers::engines::docker::{build_context, Engine, ImageInfo};

impl Engine {
    /// Build `dir` (a Docker build context) as `rmatrix/<name>:<content hash>`, only when no
    /// image of that content exists yet.
    pub async fn ensure_built(
        &self,
        name: &str,
        dir: &Path,
        args: &BTreeMap<String, String>,
    ) -> Result<ImageInfo> {
        self.ensure_built_with(name, dir, args, &[], "").await
    }

    /// `ensure_built`, with a build's own packages installed over the folder's image
    /// (`after`: the family's command after their install; see `packages::add`).
    pub(crate) async fn ensure_built_with(
        &self,
        name: &str,
        dir: &Path,
        args: &BTreeMap<String, String>,
        packages: &[PathBuf],
        after: &str,
    ) -> Result<ImageInfo> {
        let (tar, hash) = build_context(dir, args)?;
        let (tar, hash) = match packages.is_empty() {
            true => (tar, hash),
            false => {
                let (tar, added) = super::packages::add(&tar, packages, after)?;
                let both = Sha256::digest(format!("{hash}\0{added}").as_bytes());
                (tar, format!("{both:x}"))
            }
        };
        let reference = format!(
            "rmatrix/{}:{}",
            crate::model::slug(name).to_lowercase(),
            &hash[..12]
        );
        if let Some(id) = self.image_id(&reference).await {
            return Ok(ImageInfo {
                reference,
                id,
                origin: "cached".into(),
                digest: None,
            });
        }
        self.build_tar(&reference, tar, args, &dir.display().to_string())
            .await
    }
}
