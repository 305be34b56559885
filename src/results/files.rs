//! Writing and reading a run directory's files so that a kill or a full disk never leaves
//! half of one: rows appended in one `write` (cut back when it fails part way), whole files
//! replaced through a rename, and a torn last line left out by readers and cut off by
//! `--resume`.

use std::fs::{self, OpenOptions};
use std::path::Path;

use anyhow::{Context, Result};

/// Serialise `rows` (with the header when `header`) in memory and append them with one
/// `write` call, so that a kill never leaves half a row (a row can be 15 KB, more than the
/// CSV writer's buffer, which would split it into two writes). A write that fails part way
/// (a full disk takes what fits, then refuses the rest) is cut back to where the file ended,
/// so the file keeps whole rows only.
pub(crate) fn write_once<T: serde::Serialize>(
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
    let before = file
        .metadata()
        .with_context(|| format!("failed to read {}", path.display()))?
        .len();
    if let Err(e) = file.write_all(&buf) {
        if let Err(cut) = file.set_len(before) {
            eprintln!(
                "warning: failed to cut {} back to its last whole row: {cut}",
                path.display()
            );
        }
        return Err(e).with_context(|| format!("failed to write {}", path.display()));
    }
    Ok(())
}

/// The bytes of a CSV file up to its last line end. Every line rmatrix writes ends with
/// `\n` (one `write` per row), so anything after the last one is a torn row (a kill in the
/// middle of a write): readers leave it out, and `--resume` cuts it off.
pub(crate) fn complete_lines(
    path: &Path,
    cap: crate::input::file::Cap,
) -> Result<Vec<u8>, crate::input::file::FileError> {
    let mut bytes = crate::input::file::read(path, cap)?;
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    Ok(bytes)
}

/// Cut a torn last line off a CSV file (see `complete_lines`); true when it had one.
pub(super) fn cut_torn_line(path: &Path, cap: crate::input::file::Cap) -> Result<bool> {
    let len = match fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    let keep = complete_lines(path, cap)?.len() as u64;
    if keep == len {
        return Ok(false);
    }
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(keep))
        .with_context(|| format!("failed to cut the torn last line of {}", path.display()))?;
    Ok(true)
}

/// Write `bytes` to `path` through a temporary file and a rename, so that a kill or a full
/// disk leaves the old file or the new one, never half of one. The temporary file is made
/// new (a link of a stored run in its place is removed, not written through), and the rename
/// replaces a link at `path` itself.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension("tmp");
    let _ = fs::remove_file(&tmp);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("failed to write {}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_never_writes_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        fs::write(&outside, "theirs").unwrap();
        let run = tmp.path().join("run");
        fs::create_dir(&run).unwrap();
        std::os::unix::fs::symlink(&outside, run.join("summary.tmp")).unwrap();
        std::os::unix::fs::symlink(&outside, run.join("report.html")).unwrap();
        replace_file(&run.join("summary.md"), b"ours").unwrap();
        replace_file(&run.join("report.html"), b"ours").unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "theirs");
        assert_eq!(fs::read_to_string(run.join("summary.md")).unwrap(), "ours");
        assert!(!fs::symlink_metadata(run.join("report.html"))
            .unwrap()
            .is_symlink());
    }
}
