//! Every file rmatrix reads goes through `read`: a regular file (a symlink to `/dev/zero`, a
//! FIFO or a directory is refused before a byte is read) of at most its kind's cap (reading
//! stops one byte past it, so a growing or endless file costs no memory). The caps are
//! generous for real runs and stated in docs/run-directory.md.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What a file is, and the most bytes rmatrix reads of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    pub(crate) what: &'static str,
    pub(crate) bytes: u64,
}

const MIB: u64 = 1 << 20;

const fn cap(what: &'static str, bytes: u64) -> Cap {
    Cap { what, bytes }
}

/// A matrix file, its stored copy, a hosts (`--engines`) file, a summary template,
/// containers/builds.yaml, a Docker config or context file: a few KiB of text each.
pub(crate) const MATRIX: Cap = cap("a matrix", super::yaml::MAX_FILE_BYTES);
pub(crate) const HOSTS: Cap = cap("a hosts file", MIB);
pub(crate) const TEMPLATE: Cap = cap("a template", MIB);
pub(crate) const DOCKER_CONFIG: Cap = cap("a Docker config file", MIB);
/// manifest.json: a few KiB per deployment.
pub(crate) const MANIFEST: Cap = cap("a manifest.json", 16 * MIB);
/// A deployment's variables.json, verified.json and rendered config files.
pub(crate) const SERVER_FILE: Cap = cap("a server's stored file", 16 * MIB);
/// results.csv: a row is ~1 KB, at most ~15 KB in format 1 (its server counters), so this is
/// over 17,000 iterations of the widest rows.
pub(crate) const RESULTS: Cap = cap("a results.csv", 256 * MIB);
/// samples.csv and warmup.csv: ~120 bytes a second, so over 4 million measured seconds.
pub(crate) const SAMPLES: Cap = cap("a samples file", 512 * MIB);
/// operations.csv: ~300 bytes per operation of a suite.
pub(crate) const OPERATIONS: Cap = cap("an operations.csv", 64 * MIB);
/// counters.csv: ~70 bytes per counter that moved (a few dozen to a few hundred per
/// iteration), what results.csv held before format 2.
pub(crate) const COUNTERS: Cap = cap("a counters.csv", 256 * MIB);
/// A profile's folded stacks: a few thousand distinct stacks of a few hundred bytes.
pub(crate) const PROFILE: Cap = cap("a profile", 64 * MIB);
/// server_seconds.csv: ~80 bytes per counter that moved in a second (a few dozen a second).
pub(crate) const SERVER_SECONDS: Cap = cap("a server_seconds.csv", 512 * MIB);

#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    #[error("failed to read {}: {source}", shown(path))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is not a regular file ({kind}): rmatrix reads {} from a regular file only",
        shown(path),
        cap.what
    )]
    NotRegular {
        path: PathBuf,
        kind: &'static str,
        cap: Cap,
    },
    #[error(
        "{} is larger than {}, the most rmatrix reads of {} (docs/run-directory.md)",
        shown(path),
        size(cap.bytes),
        cap.what
    )]
    TooLarge { path: PathBuf, cap: Cap },
}

impl crate::error::Kinded for FileError {
    fn kind(&self) -> crate::error::ErrorKind {
        // A file rmatrix cannot read or will not read whole is an input to fix.
        crate::error::ErrorKind::BadInput
    }
}

impl FileError {
    /// The file was not there (callers that take an absent file as "none" ask).
    pub(crate) fn is_missing(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// `16 MiB`, or the bytes of a cap that is not whole MiB.
fn size(bytes: u64) -> String {
    match bytes % MIB {
        0 => format!("{} MiB", bytes / MIB),
        _ => format!("{bytes} bytes"),
    }
}

fn shown(path: &Path) -> String {
    crate::escape::terminal(&path.display().to_string())
}

/// The bytes of the regular file at `path`, refused past `cap`.
pub(crate) fn read(path: &Path, cap: Cap) -> Result<Vec<u8>, FileError> {
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let io = |source| FileError::Io {
        path: path.into(),
        source,
    };
    // Non-blocking, so that opening a FIFO does not wait for a writer; the type is checked
    // on the opened file itself, not on a name that could change in between.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let t = file.metadata().map_err(io)?.file_type();
    if !t.is_file() {
        let kind = match () {
            _ if t.is_dir() => "a directory",
            _ if t.is_char_device() => "a character device",
            _ if t.is_block_device() => "a block device",
            _ if t.is_fifo() => "a FIFO",
            _ if t.is_socket() => "a socket",
            _ => "not a plain file",
        };
        return Err(FileError::NotRegular {
            path: path.into(),
            kind,
            cap,
        });
    }
    let mut bytes = Vec::new();
    file.take(cap.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap.bytes {
        return Err(FileError::TooLarge {
            path: path.into(),
            cap,
        });
    }
    Ok(bytes)
}

/// `read` as UTF-8 text (a file that is not is an I/O error naming it).
pub(crate) fn read_text(path: &Path, cap: Cap) -> Result<String, FileError> {
    String::from_utf8(read(path, cap)?).map_err(|e| FileError::Io {
        path: path.into(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// `read_text`, `None` when there is no such file.
pub(crate) fn read_text_optional(path: &Path, cap: Cap) -> Result<Option<String>, FileError> {
    match read_text(path, cap) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Cap = cap("a test file", 8);

    #[test]
    fn a_device_a_directory_and_a_fifo_are_refused_before_reading() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("results.csv");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read(&link, RESULTS).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("results.csv is not a regular file (a character device): rmatrix reads a results.csv from a regular file only"),
            "{e}"
        );
        let e = read(tmp.path(), SMALL).unwrap_err();
        assert!(e.to_string().contains("(a directory)"), "{e}");
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo, SMALL).unwrap_err();
        assert!(e.to_string().contains("(a FIFO)"), "{e}");
    }

    #[test]
    fn the_cap_is_named_and_absent_files_are_none() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        std::fs::write(&f, "12345678").unwrap();
        assert_eq!(read_text(&f, SMALL).unwrap(), "12345678");
        std::fs::write(&f, "123456789").unwrap();
        let e = read(&f, SMALL).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("f is larger than 8 bytes, the most rmatrix reads of a test file (docs/run-directory.md)"),
            "{e}"
        );
        assert!(read_text_optional(&tmp.path().join("none"), SMALL)
            .unwrap()
            .is_none());
        std::fs::write(&f, b"\xff").unwrap();
        assert!(read_text(&f, SMALL).is_err());
    }
}
