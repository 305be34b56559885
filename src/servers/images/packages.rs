//! A build's own packages in a family's image (`servers.<name>.packages: [x.deb]` with
//! `build:`): the `.deb` files join the build context, and lines appended to the family's
//! Dockerfile install them over the suite's, so the image is content-hashed with them.

use std::path::PathBuf;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// Where the packages go in the build context and in the image while they are installed.
const DIR: &str = "rmatrix-packages";

/// The context `tar` (of a family's folder) with `packages` and the lines that install them
/// appended to its Dockerfile; `after` is the family's shell command run after the install
/// (e.g. emptying a datadir the package's scripts made). Also the hash of what was added.
pub(crate) fn add(tar: &[u8], packages: &[PathBuf], after: &str) -> Result<(Vec<u8>, String)> {
    let mut hasher = Sha256::new();
    let mut out = tar::Builder::new(Vec::new());
    let mut archive = tar::Archive::new(tar);
    let mut dockerfile = None;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data)?;
        if path.as_os_str() == "Dockerfile" {
            dockerfile = Some(data);
            continue;
        }
        let mut header = entry.header().clone();
        out.append_data(&mut header, &path, data.as_slice())?;
    }
    let mut dockerfile = dockerfile.context("the build folder has no Dockerfile")?;
    for (i, p) in packages.iter().enumerate() {
        let data = crate::input::file::read(p, crate::input::file::BUILD_FILE)?;
        hasher.update(Sha256::digest(&data));
        // Named by position: nothing of the file's name reaches the Dockerfile.
        append(&mut out, &format!("{DIR}/{i:03}.deb"), &data, 0o644)?;
    }
    let after = match after.is_empty() {
        true => String::new(),
        false => format!(" \\\n && {after}"),
    };
    let lines = format!(
        "\n# The build's own packages (rmatrix: servers.<name>.packages).\n\
         COPY {DIR}/ /tmp/{DIR}/\n\
         RUN apt-get -o Acquire::Check-Valid-Until=false update \\\n \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
         --reinstall --allow-downgrades /tmp/{DIR}/*.deb \\\n \
         && rm -rf /var/lib/apt/lists/* /tmp/{DIR}{after}\n"
    );
    hasher.update(lines.as_bytes());
    dockerfile.extend_from_slice(lines.as_bytes());
    append(&mut out, "Dockerfile", &dockerfile, 0o644)?;
    Ok((out.into_inner()?, format!("{:x}", hasher.finalize())))
}

fn append(b: &mut tar::Builder<Vec<u8>>, path: &str, data: &[u8], mode: u32) -> Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(mode);
    header.set_cksum();
    b.append_data(&mut header, path, data)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_join_the_context_and_the_dockerfile_installs_them() {
        let mut b = tar::Builder::new(Vec::new());
        append(&mut b, "Dockerfile", b"FROM debian\n", 0o644).unwrap();
        append(&mut b, "entrypoint.sh", b"#!/bin/sh\n", 0o755).unwrap();
        let tar = b.into_inner().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let deb = tmp.path().join("x;rm -rf.deb");
        std::fs::write(&deb, b"not really a deb").unwrap();
        let (out, hash) = add(&tar, std::slice::from_ref(&deb), "rm -rf /var/lib/x/*").unwrap();
        let mut files = std::collections::BTreeMap::new();
        for e in tar::Archive::new(out.as_slice()).entries().unwrap() {
            let mut e = e.unwrap();
            let p = e.path().unwrap().display().to_string();
            let mut s = String::new();
            std::io::Read::read_to_string(&mut e, &mut s).unwrap();
            files.insert(p, s);
        }
        assert_eq!(files["rmatrix-packages/000.deb"], "not really a deb");
        let d = &files["Dockerfile"];
        assert!(d.starts_with("FROM debian\n"), "{d}");
        assert!(d.contains("apt-get install"), "{d}");
        assert!(d.contains("&& rm -rf /var/lib/x/*"), "{d}");
        assert!(
            !d.contains("x;rm"),
            "the file's name stays out of the Dockerfile: {d}"
        );
        std::fs::write(&deb, b"another build").unwrap();
        let (_, other) = add(&tar, &[deb], "").unwrap();
        assert_ne!(hash, other, "the hash follows the packages' content");
    }
}
