//! Where each `build:` server's image is built from: a folder of `containers/` (or a path
//! relative to the matrix file), or a name from `containers/builds.yaml`, and the build
//! arguments its Dockerfile declares.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::MatrixError;
use super::Validator;
use crate::input::span::SpanIndex;
use crate::input::untrusted;
use crate::matrix::model::{BuildDir, BuildSpec};

/// What a `build:` server's image is built from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Build {
    /// The context folder, with its Dockerfile.
    pub(crate) dir: PathBuf,
    /// Values of `ARG`s the Dockerfile declares (checked with `untrusted::build_arg_*`).
    pub(crate) args: BTreeMap<String, String>,
    /// The build's own packages installed into the image (`packages:`), checked files.
    pub(crate) packages: Vec<PathBuf>,
}

/// The names `build:` accepts besides folders: `mariadb-10.11: {dir: mariadb, args: {...}}`.
pub(crate) const BUILD_NAMES: &str = "builds.yaml";

/// Folders (`:`-separated) the user allows as build contexts besides the matrix's own folder
/// and containers/.
pub(crate) const BUILD_DIRS_ENV: &str = "RMATRIX_BUILD_DIRS";

/// Most files a build context may hold (each is read and sent to the engine).
const MAX_CONTEXT_FILES: usize = 10_000;

impl Validator<'_> {
    /// The folder and arguments of every `build:` server, by server name.
    pub(super) fn build_dirs(&self, base: &Path) -> Result<HashMap<String, Build>, MatrixError> {
        let containers = containers_dir(base);
        let containers = containers.as_deref();
        let mut out = HashMap::new();
        for (name, s) in &self.m.servers {
            let Some(build) = &s.build else { continue };
            let path = format!("servers.{name}.build");
            let (mut resolved, at) = match build {
                BuildSpec::Dir(d) => (
                    self.build_of_dir(base, containers, &path, d)?,
                    format!("{path}.dir"),
                ),
                BuildSpec::Name(n) => (
                    self.build_of_name(base, containers, &path, n)?,
                    path.clone(),
                ),
            };
            context_allowed(&resolved.dir, base, containers).map_err(|msg| self.err(&at, msg))?;
            for (i, p) in s.packages.iter().enumerate() {
                let file = package_file(base, p)
                    .map_err(|msg| self.err(&format!("servers.{name}.packages[{i}]"), msg))?;
                resolved.packages.push(file);
            }
            out.insert(name.clone(), resolved);
        }
        self.packages_only_with_build()?;
        Ok(out)
    }

    /// `build: {dir: ..., args: ...}`: a folder, and arguments its Dockerfile declares.
    fn build_of_dir(
        &self,
        base: &Path,
        containers: Option<&Path>,
        path: &str,
        BuildDir { dir, args }: &BuildDir,
    ) -> Result<Build, MatrixError> {
        let found = resolve_build_dir(base, containers, dir)
            .ok_or_else(|| self.not_found(containers, dir, &format!("{path}.dir"), &[]))?;
        for (k, v) in args {
            let at = format!("{path}.args.{k}");
            untrusted::build_arg_name(k).map_err(|msg| self.err_at(self.spans.key(&at), msg))?;
            untrusted::build_arg_value(k, v).map_err(|msg| self.err(&at, msg))?;
            declared(&found, k).map_err(|msg| self.err_at(self.spans.key(&at), msg))?;
        }
        Ok(Build {
            dir: found,
            args: args.clone().into_iter().collect(),
            packages: Vec::new(),
        })
    }

    /// `build: NAME`: a folder, or else a name from containers/builds.yaml.
    fn build_of_name(
        &self,
        base: &Path,
        containers: Option<&Path>,
        path: &str,
        n: &str,
    ) -> Result<Build, MatrixError> {
        if let Some(dir) = resolve_build_dir(base, containers, n) {
            return Ok(Build {
                dir,
                args: BTreeMap::new(),
                packages: Vec::new(),
            });
        }
        let Some(here) = containers.filter(|_| !n.contains('/')) else {
            return Err(self.not_found(containers, n, path, &[]));
        };
        let file = here.join(BUILD_NAMES);
        let names = build_names(&file).map_err(|e| self.err(path, e))?;
        let Some(named) = names.get(n) else {
            let names: Vec<String> = names.keys().cloned().collect();
            return Err(self.not_found(containers, n, path, &names));
        };
        let in_file = |msg: String| self.err(path, format!("`{n}` in {}: {msg}", file.display()));
        let dir = resolve_build_dir(here, Some(here), &named.dir)
            .ok_or_else(|| in_file(format!("no Dockerfile for `{}`", named.dir)))?;
        for (k, v) in &named.args {
            untrusted::build_arg_name(k)
                .and_then(|()| untrusted::build_arg_value(k, v))
                .and_then(|()| declared(&dir, k))
                .map_err(in_file)?;
        }
        Ok(Build {
            dir,
            args: named.args.clone().into_iter().collect(),
            packages: Vec::new(),
        })
    }

    /// No Dockerfile for `dir`: the error lists the folders of containers/ (for a plain
    /// name) and the `names` of builds.yaml.
    fn not_found(
        &self,
        containers: Option<&Path>,
        dir: &str,
        path: &str,
        names: &[String],
    ) -> MatrixError {
        let mut available = match containers {
            Some(c) if !dir.contains('/') => folders(c),
            _ => Vec::new(),
        };
        available.extend(names.iter().cloned());
        available.sort();
        self.err(
            path,
            format!(
                "no Dockerfile for `{}` under containers/; available: {}",
                untrusted::printable(dir),
                if available.is_empty() {
                    "(none found)".into()
                } else {
                    available.join(", ")
                }
            ),
        )
    }

    /// `packages` are installed into a built image: a server without `build:` has none.
    fn packages_only_with_build(&self) -> Result<(), MatrixError> {
        for (name, s) in &self.m.servers {
            if !s.packages.is_empty() && s.build.is_none() {
                return Err(self.err(
                    &format!("servers.{name}.packages"),
                    "`packages` go with `build:`: they are installed into the family's image"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}

/// Largest package file accepted.
const MAX_PACKAGE_BYTES: u64 = 2 << 30;

/// The `.deb` file `written` names (relative to `base`): a regular file reached without
/// `..` or a symbolic link, under the matrix's folder or one listed in `RMATRIX_BUILD_DIRS`
/// (its bytes are sent to the engine and installed as root there).
fn package_file(base: &Path, written: &str) -> Result<PathBuf, String> {
    let shown = untrusted::printable(written);
    if !written.ends_with(".deb") {
        return Err(format!("package `{shown}` is no `.deb` file"));
    }
    let path = Path::new(written);
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(format!(
            "package `{shown}` climbs out of where it points with `..`"
        ));
    }
    let full = std::path::absolute(base.join(path)).map_err(|e| format!("`{shown}`: {e}"))?;
    let real = full
        .canonicalize()
        .map_err(|e| format!("package `{shown}`: {e}"))?;
    if real != full {
        return Err(format!("package `{shown}` passes through a symbolic link"));
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("package `{shown}`: {e}"))?;
    if !meta.is_file() || meta.len() > MAX_PACKAGE_BYTES {
        return Err(format!(
            "package `{shown}` must be a regular file of at most 2 GiB"
        ));
    }
    let base = match base.as_os_str().is_empty() {
        true => Path::new("."),
        false => base,
    };
    let listed = std::env::var_os(BUILD_DIRS_ENV).unwrap_or_default();
    let inside = std::iter::once(base.to_path_buf())
        .chain(std::env::split_paths(&listed).filter(|p| !p.as_os_str().is_empty()))
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|r| real.starts_with(r));
    if !inside {
        return Err(format!(
            "package `{shown}` is outside the matrix's folder: list its folder in \
             {BUILD_DIRS_ENV} to allow it"
        ));
    }
    Ok(real)
}

/// Where `build:` names and source recipes are looked up: the nearest `containers/` folder
/// above the matrix file, else `./containers`, else the one above the running rmatrix (its
/// clone's, as `target/release/rmatrix` sits in it): a matrix kept in any folder, run from
/// any folder, still finds the recipes the binary was built with (last, the clone it was
/// built from, for a binary built into a target folder elsewhere).
pub(super) fn containers_dir(base: &Path) -> Option<PathBuf> {
    // Absolute, so that `rmatrix run quick.yaml` in matrices/ finds ../containers.
    let base = match base.as_os_str().is_empty() {
        true => std::path::absolute("."),
        false => std::path::absolute(base),
    }
    .unwrap_or_else(|_| base.to_path_buf());
    let exe = std::env::current_exe().ok();
    let beside_binary = exe.iter().flat_map(|e| e.ancestors().skip(1));
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"));
    base.ancestors()
        .chain(std::iter::once(Path::new(".")))
        .chain(beside_binary)
        .chain(std::iter::once(built_from))
        .map(|d| d.join("containers"))
        .find(|c| c.is_dir())
}

/// The folder of `build: dir`: with a `/`, a path relative to the matrix file; otherwise a
/// folder of `containers/`. None when it has no Dockerfile.
fn resolve_build_dir(base: &Path, containers: Option<&Path>, dir: &str) -> Option<PathBuf> {
    // A name is one folder of containers/, never containers/ itself or what is above it.
    if matches!(dir, "" | "." | "..") {
        return None;
    }
    let candidate = if dir.contains('/') {
        base.join(dir)
    } else {
        containers?.join(dir)
    };
    candidate.join("Dockerfile").is_file().then_some(candidate)
}

/// A build sends its folder to the Docker engine and runs its Dockerfile there, so a matrix
/// (pasted from anywhere) may name only a folder under its own folder or containers/, or
/// one the user lists in `RMATRIX_BUILD_DIRS`; and the folder holds files, not links
/// (which could lead the build to any file of this machine).
fn context_allowed(dir: &Path, base: &Path, containers: Option<&Path>) -> Result<(), String> {
    let shown = || untrusted::printable(&dir.display().to_string());
    // `m.yaml` has an empty parent: the current folder.
    let base = match base.as_os_str().is_empty() {
        true => Path::new("."),
        false => base,
    };
    let real = std::fs::canonicalize(dir).map_err(|e| format!("cannot read {}: {e}", shown()))?;
    let listed = std::env::var_os(BUILD_DIRS_ENV).unwrap_or_default();
    let roots = [base.to_path_buf()]
        .into_iter()
        .chain(containers.map(Path::to_path_buf))
        .chain(std::env::split_paths(&listed).filter(|p| !p.as_os_str().is_empty()));
    let inside = roots
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|r| real.starts_with(r));
    if !inside {
        return Err(format!(
            "build folder {} is outside the matrix's folder and containers/: a build sends \
             the folder to the Docker engine and runs its Dockerfile; to allow it, add it to \
             {BUILD_DIRS_ENV} (folders separated by `:`)",
            shown()
        ));
    }
    let mut seen = 0;
    no_links(&real, &mut seen)
}

/// Refuses a symbolic link anywhere under `dir`, and more than `MAX_CONTEXT_FILES` entries.
fn no_links(dir: &Path, seen: &mut usize) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        *seen += 1;
        if *seen > MAX_CONTEXT_FILES {
            return Err(format!(
                "build folder {} holds more than {MAX_CONTEXT_FILES} files: a build context is \
                 a Dockerfile and what it copies",
                dir.display()
            ));
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link: a build folder holds files only (a link could \
                     send any file of this machine to the engine)",
                    untrusted::printable(&path.display().to_string())
                ))
            }
            Ok(t) if t.is_dir() => no_links(&path, seen)?,
            _ => {}
        }
    }
    Ok(())
}

/// The folders of `containers/` that hold a Dockerfile, sorted.
fn folders(containers: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(containers)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join("Dockerfile").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The named builds of `containers/builds.yaml` (none when the file does not exist).
fn build_names(file: &Path) -> Result<IndexMap<String, BuildDir>, String> {
    let text = match crate::input::file::read_text_optional(file, crate::input::file::MATRIX) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(IndexMap::new()),
        Err(e) => return Err(e.to_string()),
    };
    crate::input::yaml::from_str(&text).map_err(|e| {
        let spans = SpanIndex::build(&text);
        let (pos, message) = crate::input::yaml::describe(&e, &spans, &text, &[]);
        format!("{}:{}:{}: {message}", file.display(), pos.line, pos.col)
    })
}

/// Ok when the Dockerfile in `dir` declares `ARG name`; else the names it declares.
fn declared(dir: &Path, name: &str) -> Result<(), String> {
    let dockerfile = dir.join("Dockerfile");
    let text =
        crate::input::file::read_text(&dockerfile, crate::input::file::MATRIX).unwrap_or_default();
    let mut names: Vec<&str> = Vec::new();
    for line in text.lines() {
        let Some((instruction, rest)) = line.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        if !instruction.eq_ignore_ascii_case("ARG") {
            continue;
        }
        for word in rest.split_whitespace() {
            let arg = word.split('=').next().unwrap_or_default();
            if untrusted::build_arg_name(arg).is_ok() && !names.contains(&arg) {
                names.push(arg);
            }
        }
    }
    if names.contains(&name) {
        return Ok(());
    }
    Err(format!(
        "build argument `{name}` is not declared in {} (`ARG {name}`); declared: {}",
        dockerfile.display(),
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    ))
}
