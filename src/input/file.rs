//! Every file rmatrix reads goes through `open`: a regular file (a symlink to `/dev/zero`, a
//! FIFO or a directory is refused before a byte is read, and opening a FIFO does not wait
//! for a writer) of at most its kind's cap (reading stops one byte past it, so a growing or
//! endless file costs no memory). A file of a stored run directory is not read through a
//! symbolic link: a run copied or unpacked from elsewhere could point one at any file of this
//! machine, and its content would be shown in a report. The caps are generous for real runs
//! and stated in docs/run-directory.md.

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What a file is, and the most bytes rmatrix reads of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    pub(crate) what: &'static str,
    pub(crate) bytes: u64,
    /// A file of a stored run directory: a symbolic link to it is refused.
    pub(crate) stored: bool,
}

const MIB: u64 = 1 << 20;

const fn cap(what: &'static str, bytes: u64) -> Cap {
    Cap {
        what,
        bytes,
        stored: false,
    }
}

const fn stored(what: &'static str, bytes: u64) -> Cap {
    Cap {
        what,
        bytes,
        stored: true,
    }
}

/// A matrix file, its stored copy, a hosts (`--engines`) file, a summary template,
/// containers/builds.yaml, a Docker config or context file: a few KiB of text each.
pub(crate) const MATRIX: Cap = cap("a matrix", super::yaml::MAX_FILE_BYTES);
pub(crate) const HOSTS: Cap = cap("a hosts file", MIB);
pub(crate) const TEMPLATE: Cap = cap("a template", MIB);
pub(crate) const DOCKER_CONFIG: Cap = cap("a Docker config file", MIB);
/// A file of a build folder or a package (`packages:`), sent to Docker whole.
pub(crate) const BUILD_FILE: Cap = cap("a build's file", 4096 * MIB);
/// A run directory's copy of its matrix.
pub(crate) const MATRIX_COPY: Cap = stored("a matrix", super::yaml::MAX_FILE_BYTES);
/// What `rmatrix ratio` reads on stdin (`A B` per round: over 500,000 rounds), and what an
/// orchestrating rmatrix sends another (a cell or a server to wait for).
pub(crate) const STDIN: Cap = cap("standard input", 16 * MIB);
/// The head of a file that may be a SQLite store (its 16-byte header).
pub(crate) const STORE_HEADER: Cap = cap("a results store", 16);
/// manifest.json: a few KiB per deployment.
pub(crate) const MANIFEST: Cap = stored("a manifest.json", 16 * MIB);
/// A compare's JSON (`--only-regressed`): a few KiB per cell.
pub(crate) const COMPARE_JSON: Cap = cap("a compare's JSON", 16 * MIB);
/// A deployment's variables.json, verified.json and rendered config files.
pub(crate) const SERVER_FILE: Cap = stored("a server's stored file", 16 * MIB);
/// results.csv: a row is ~1 KB, at most ~15 KB in format 1 (its server counters), so this is
/// over 17,000 iterations of the widest rows.
pub(crate) const RESULTS: Cap = stored("a results.csv", 256 * MIB);
/// samples.csv and warmup.csv: ~120 bytes a second, so over 4 million measured seconds.
pub(crate) const SAMPLES: Cap = stored("a samples file", 512 * MIB);
/// operations.csv: ~300 bytes per operation of a suite.
pub(crate) const OPERATIONS: Cap = stored("an operations.csv", 64 * MIB);
/// counters.csv: ~70 bytes per counter that moved (a few dozen to a few hundred per
/// iteration), what results.csv held before format 2.
pub(crate) const COUNTERS: Cap = stored("a counters.csv", 256 * MIB);
/// A profile's folded stacks: a few thousand distinct stacks of a few hundred bytes.
pub(crate) const PROFILE: Cap = stored("a profile", 64 * MIB);
/// server_seconds.csv: ~80 bytes per counter that moved in a second (a few dozen a second).
pub(crate) const SERVER_SECONDS: Cap = stored("a server_seconds.csv", 512 * MIB);
/// A callgrind dump without per-instruction lines: one to a few hundred KB per phase.
pub(crate) const CALLGRIND: Cap = stored("a callgrind dump", 256 * MIB);

#[derive(Debug)]
pub(crate) enum FileError {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    NotRegular {
        path: PathBuf,
        kind: &'static str,
        cap: Cap,
    },
    TooLarge {
        path: PathBuf,
        cap: Cap,
    },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io { path, source } => write!(f, "failed to read {}: {source}", shown(path)),
            FileError::NotRegular { path, kind, cap } => write!(
                f,
                "{} is not a regular file ({kind}): rmatrix reads {} from a regular file only",
                shown(path),
                cap.what
            ),
            FileError::TooLarge { path, cap } => write!(
                f,
                "{} is larger than {}, the most rmatrix reads of {} (docs/run-directory.md)",
                shown(path),
                size(cap.bytes),
                cap.what
            ),
        }
    }
}

impl crate::error::Kinded for FileError {
    fn kind(&self) -> crate::error::ErrorKind {
        // A file rmatrix cannot read or will not read whole is an input to fix.
        crate::error::ErrorKind::BadInput
    }

    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            FileError::NotRegular { .. } | FileError::TooLarge { .. } => None,
        }
    }
}

crate::error::kinded!(FileError);

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

/// The regular file at `path`, opened for reading as `cap` says (see the module).
pub(crate) fn open(path: &Path, cap: Cap) -> Result<File, FileError> {
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
    let io = |source| FileError::Io {
        path: path.into(),
        source,
    };
    let not_regular = |kind| FileError::NotRegular {
        path: path.into(),
        kind,
        cap,
    };
    // Non-blocking, so that opening a FIFO does not wait for a writer; the type is checked
    // on the opened file itself, not on a name that could change in between.
    let flags = libc::O_NONBLOCK | if cap.stored { libc::O_NOFOLLOW } else { 0 };
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if cap.stored && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(not_regular("a symbolic link"))
        }
        Err(e) => return Err(io(e)),
    };
    let t = file.metadata().map_err(io)?.file_type();
    if !t.is_file() {
        return Err(not_regular(match () {
            _ if t.is_dir() => "a directory",
            _ if t.is_char_device() => "a character device",
            _ if t.is_block_device() => "a block device",
            _ if t.is_fifo() => "a FIFO",
            _ if t.is_socket() => "a socket",
            _ => "not a plain file",
        }));
    }
    Ok(file)
}

/// The bytes of the regular file at `path`, refused past `cap`.
pub(crate) fn read(path: &Path, cap: Cap) -> Result<Vec<u8>, FileError> {
    let file = open(path, cap)?;
    capped(file, cap).map_err(|e| match e {
        Capped::Io(source) => FileError::Io {
            path: path.into(),
            source,
        },
        Capped::TooLarge => FileError::TooLarge {
            path: path.into(),
            cap,
        },
    })
}

/// The first `cap.bytes` bytes of the regular file at `path` (fewer if it is shorter).
pub(crate) fn head(path: &Path, cap: Cap) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::new();
    open(path, cap)?
        .take(cap.bytes)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io {
            path: path.into(),
            source,
        })?;
    Ok(bytes)
}

/// All of standard input as UTF-8 text, refused past `cap`.
pub(crate) fn read_stdin(cap: Cap) -> Result<String, FileError> {
    let path = Path::new("standard input");
    let bytes = capped(std::io::stdin().lock(), cap).map_err(|e| match e {
        Capped::Io(source) => FileError::Io {
            path: path.into(),
            source,
        },
        Capped::TooLarge => FileError::TooLarge {
            path: path.into(),
            cap,
        },
    })?;
    text(path, bytes)
}

enum Capped {
    Io(std::io::Error),
    TooLarge,
}

/// All of `source`, read no further than one byte past `cap`.
fn capped(source: impl std::io::Read, cap: Cap) -> Result<Vec<u8>, Capped> {
    let mut bytes = Vec::new();
    source
        .take(cap.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(Capped::Io)?;
    match bytes.len() as u64 > cap.bytes {
        true => Err(Capped::TooLarge),
        false => Ok(bytes),
    }
}

fn text(path: &Path, bytes: Vec<u8>) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|e| FileError::Io {
        path: path.into(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// `read` as UTF-8 text (a file that is not is an I/O error naming it).
pub(crate) fn read_text(path: &Path, cap: Cap) -> Result<String, FileError> {
    text(path, read(path, cap)?)
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
        let e = read(&link, HOSTS).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("results.csv is not a regular file (a character device): rmatrix reads a hosts file from a regular file only"),
            "{e}"
        );
        // A stored run's file is not read through a link, even to a regular file.
        let e = read(&link, RESULTS).unwrap_err();
        assert!(e.to_string().contains("(a symbolic link)"), "{e}");
        std::fs::write(tmp.path().join("real.csv"), "a\n").unwrap();
        std::os::unix::fs::symlink("real.csv", tmp.path().join("link.csv")).unwrap();
        let e = read(&tmp.path().join("link.csv"), RESULTS).unwrap_err();
        assert!(e.to_string().contains("(a symbolic link)"), "{e}");
        assert_eq!(read(&tmp.path().join("link.csv"), HOSTS).unwrap(), b"a\n");
        let e = read(tmp.path(), SMALL).unwrap_err();
        assert!(e.to_string().contains("(a directory)"), "{e}");
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo, SMALL).unwrap_err();
        assert!(e.to_string().contains("(a FIFO)"), "{e}");
        let e = head(&fifo, STORE_HEADER).unwrap_err();
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
