//! The run directory: one folder per run, never overwritten. Results are appended as each
//! iteration finishes, so a run killed midway keeps what it measured.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::row::ResultRow;

pub const RESULTS_CSV: &str = "results.csv";
pub const MATRIX_COPY: &str = "matrix.yaml";
pub const MANIFEST: &str = "manifest.json";
pub const SUMMARY_MD: &str = "summary.md";

#[derive(Debug, Clone)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// A new directory `<base>/<timestamp>-<name>`; a suffix keeps it unique.
    pub fn create(base: &Path, name: &str) -> Result<RunDir> {
        fs::create_dir_all(base).with_context(|| format!("failed to create {}", base.display()))?;
        let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
        let stem = format!("{stamp}-{}", crate::matrix::plan::slug(name));
        for n in 1.. {
            let path = if n == 1 {
                base.join(&stem)
            } else {
                base.join(format!("{stem}-{n}"))
            };
            match fs::create_dir(&path) {
                Ok(()) => return Ok(RunDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("failed to create {}", path.display()))
                }
            }
        }
        unreachable!("the loop only ends by returning")
    }

    /// An existing run directory (for `--resume` and `report`).
    pub fn open(path: &Path) -> Result<RunDir> {
        if !path.join(MATRIX_COPY).is_file() {
            return Err(crate::UsageError(format!(
                "{} is not an rmatrix run directory (no {MATRIX_COPY})",
                path.display()
            ))
            .into());
        }
        Ok(RunDir {
            path: path.to_path_buf(),
        })
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Per-deployment folder for the rendered config, server log and variables.
    pub fn deployment_dir(&self, slug: &str) -> Result<PathBuf> {
        let dir = self.path.join("servers").join(slug);
        fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
        Ok(dir)
    }

    pub fn append(&self, row: &ResultRow) -> Result<()> {
        let path = self.file(RESULTS_CSV);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
        write_once(file, &path, empty, std::slice::from_ref(row))
    }
}

/// Serialise `rows` (with the header when `header`) in memory and append them with one
/// `write` call, so that a kill or a full disk never leaves half a row (a row can be 15 KB,
/// more than the CSV writer's buffer, which would split it into two writes).
pub fn write_once<T: serde::Serialize>(
    mut file: fs::File,
    path: &Path,
    header: bool,
    rows: &[T],
) -> Result<()> {
    use std::io::Write as _;
    let mut w = csv::WriterBuilder::new()
        .has_headers(header)
        .from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let buf = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    file.write_all(&buf)
        .with_context(|| format!("failed to write {}", path.display()))
}

impl RunDir {
    pub fn rows(&self) -> Result<Vec<ResultRow>> {
        read_rows(&self.file(RESULTS_CSV))
    }

    pub fn write_json(&self, name: &str, value: &serde_json::Value) -> Result<()> {
        let path = self.file(name);
        fs::write(&path, serde_json::to_string_pretty(value)? + "\n")
            .with_context(|| format!("failed to write {}", path.display()))
    }
}

pub fn read_rows(path: &Path) -> Result<Vec<ResultRow>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut r = csv::Reader::from_path(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let mut rows = Vec::new();
    for (i, rec) in r.deserialize().enumerate() {
        rows.push(rec.with_context(|| format!("{}: bad row {}", path.display(), i + 2))?);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir::create(tmp.path(), "t").unwrap();
        let other = RunDir::create(tmp.path(), "t").unwrap();
        assert_ne!(dir.path, other.path, "never reuse a run directory");
        let mut row = ResultRow {
            server: "s".into(),
            status: "ok".into(),
            qps: Some(12.5),
            ..Default::default()
        };
        dir.append(&row).unwrap();
        row.iteration = 2;
        row.qps = None;
        dir.append(&row).unwrap();
        let rows = dir.rows().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].qps, Some(12.5));
        assert_eq!(rows[1].qps, None);
        let text = fs::read_to_string(dir.file(RESULTS_CSV)).unwrap();
        assert_eq!(text.matches("server,config").count(), 1, "header once");
    }
}
