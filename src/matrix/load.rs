//! Reading and validating a matrix file. Every problem found here is reported with the
//! file, line and column, and the valid choices where there is a closed set, before any
//! container starts.
//!
//! The steps, one module each: `read` (the text, its YAML and positions), `params` (its
//! parameters substituted first, into the text that is read, stored and hashed),
//! `Validator::check` (each block of the file, in a fixed order), `expansion` (the expanded
//! plan), `builds` (where `build:` images come from), `sources` (what `source:` servers are
//! built from).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use sha2::{Digest, Sha256};

use super::model::Matrix;
use validator::Validator;

mod axes;
mod builds;
mod error;
mod expansion;
mod families;
mod pacing;
mod params;
mod read;
mod report;
mod selectors;
mod sources;
mod timing;
mod untrusted;
mod validator;
mod workloads;

use crate::servers::images::build::SourceBuild;
pub(crate) use builds::Build;
pub use error::MatrixError;
pub use params::parse_set;

/// A validated matrix with what was derived from its surroundings. Load it once per command
/// and pass it on: every check has run, nothing needs to read the file again.
#[derive(Debug, Clone)]
pub struct LoadedMatrix {
    pub matrix: Matrix,
    pub(crate) path: PathBuf,
    /// The text as read: its parameters substituted (what a run stores and hashes).
    pub(crate) text: String,
    pub(crate) sha256: String,
    /// Each parameter's value, in the order declared (empty without `params:`, and for a
    /// run's stored copy, whose values its manifest holds).
    pub params: IndexMap<String, String>,
    /// Build context directory and build arguments of each `build:` server.
    pub(crate) build_dirs: HashMap<String, Build>,
    /// Work tree, commit and recipe of each `source:` server.
    pub(crate) sources: HashMap<String, SourceBuild>,
}

impl LoadedMatrix {
    pub(crate) fn name(&self) -> String {
        self.matrix.name.clone().unwrap_or_else(|| {
            self.path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "matrix".into())
        })
    }
}

pub fn load_file(path: &Path) -> Result<LoadedMatrix, MatrixError> {
    load_file_set(path, &[])
}

/// The matrix at `path` with its parameters from `set` (`--set NAME=VALUE` pairs), else
/// from `RMATRIX_PARAM_<name>`, else their defaults.
pub fn load_file_set(path: &Path, set: &[(String, String)]) -> Result<LoadedMatrix, MatrixError> {
    let text = read::read_file(path)?;
    load(&text, path, Source::Written(set))
}

pub fn load_str(text: &str, path: &Path) -> Result<LoadedMatrix, MatrixError> {
    load(text, path, Source::Written(&[]))
}

/// A run directory's copy for `--resume`: its parameters were substituted when the run
/// started (its manifest has their values), and its `build:` folders are found.
pub(crate) fn load_resumed(text: &str, path: &Path) -> Result<LoadedMatrix, MatrixError> {
    load(text, path, Source::Resumed)
}

/// A matrix as a client container reads it (`rmatrix drive-cell`): checked the same way,
/// but its `build:` folders are not looked for (they are the orchestrator's, not its).
pub fn load_for_client(text: &str) -> Result<LoadedMatrix, MatrixError> {
    load(text, Path::new("matrix.yaml"), Source::Client)
}

/// A run directory's copy of its matrix (`report`): checked the same way as the matrix it
/// was copied from (a hand-edited copy is untrusted input like any matrix), but its `build:`
/// folders are not looked for: they resolve from where the matrix lived, and no report
/// needs them.
pub(crate) fn load_stored(path: &Path) -> Result<LoadedMatrix, MatrixError> {
    let text = read::read_file(path)?;
    load(&text, path, Source::Stored)
}

/// Where a matrix text comes from, for the checks that differ. Only a written one has its
/// parameters substituted: the others are copies of a text that had.
#[derive(Clone, Copy, PartialEq)]
enum Source<'a> {
    /// A matrix a user wrote (`plan`, `run`), with the `--set` pairs: its `build:` folders
    /// are found.
    Written(&'a [(String, String)]),
    /// A run directory's copy that `--resume` runs: its `build:` folders are found.
    Resumed,
    /// The copy a client container is given: its `build:` folders are the orchestrator's.
    Client,
    /// A run directory's copy, which may predate a newer rule on what a matrix may say.
    Stored,
}

fn load(text: &str, path: &Path, source: Source) -> Result<LoadedMatrix, MatrixError> {
    let file = path.display().to_string();
    let (text, params) = match source {
        Source::Written(set) => params::apply(text, &file, set)?,
        Source::Resumed | Source::Client | Source::Stored => (text.to_string(), IndexMap::new()),
    };
    let (matrix, spans) = read::parse(&text, &file)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let v = Validator {
        file: &file,
        spans: &spans,
        m: &matrix,
    };
    let plan = v.check()?;
    v.check_some_cell(&plan)?;
    v.check_external(&plan)?;
    v.check_length(source == Source::Stored)?;
    let (build_dirs, sources) = match source {
        Source::Written(_) | Source::Resumed => (v.build_dirs(base)?, v.sources(base)?),
        Source::Client | Source::Stored => (HashMap::new(), HashMap::new()),
    };
    Ok(LoadedMatrix {
        sha256: format!("{:x}", Sha256::digest(text.as_bytes())),
        matrix,
        path: path.to_path_buf(),
        text,
        params,
        build_dirs,
        sources,
    })
}

/// Only the reading step (YAML, serde's types, numbers as written): the schema's tests tell
/// what it refuses from what the later checks do.
#[cfg(test)]
pub(super) fn read_text(text: &str, file: &str) -> Result<(), MatrixError> {
    read::parse(text, file).map(|_| ())
}

#[cfg(test)]
mod tests;
