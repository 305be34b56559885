//! One owner per run directory. A run or a resume holds an exclusive lock on the directory's
//! `.rmatrix.lock` for its whole life, so a second `--resume` of a live run (which would remove
//! its containers) is refused with who holds it. The kernel drops the lock when the process
//! ends, however it ends: a SIGKILLed run leaves nothing to clean up.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{Context, Result};

/// The lock file in a run directory (its text says who holds it).
pub(crate) const LOCK_FILE: &str = ".rmatrix.lock";

/// Held while it lives.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

impl RunLock {
    /// Take the lock of `dir` for `what` (`run`, `resume`), or say who holds it.
    pub(crate) fn take(dir: &Path, what: &str) -> Result<RunLock> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                // Its text is the holder's; a short read, escaped (a copied directory's file
                // is anyone's text).
                let mut text = String::new();
                let _ = (&mut file).take(200).read_to_string(&mut text);
                let holder = match text.trim() {
                    "" => "another rmatrix process holds its lock".to_string(),
                    t => crate::escape::terminal(t),
                };
                // Exit 2: the directory is busy, not broken.
                return Err(crate::error::UsageError(format!(
                    "{} is in use: {holder}; wait for it to end (or stop it) and try again",
                    crate::escape::terminal(&dir.display().to_string())
                ))
                .into());
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("failed to lock {}", path.display()))
            }
        }
        let me = format!(
            "rmatrix {what} (pid {}) since {}\n",
            std::process::id(),
            super::manifest::now()
        );
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(me.as_bytes()))
            .with_context(|| format!("failed to write {}", path.display()))?;
        Ok(RunLock { _file: file })
    }
}

/// The directory's identity on its filesystem (device and inode): a copy of a run directory
/// has another one, a renamed directory keeps it.
pub(crate) fn identity(dir: &Path) -> Result<String> {
    let meta =
        std::fs::metadata(dir).with_context(|| format!("failed to read {}", dir.display()))?;
    Ok(format!("{}:{}", meta.dev(), meta.ino()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second taker is refused with the holder's text; the lock is free once dropped.
    #[test]
    fn a_second_owner_is_refused_with_who_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::take(dir.path(), "run").unwrap();
        let e = RunLock::take(dir.path(), "resume").unwrap_err().to_string();
        assert!(e.contains("is in use: rmatrix run (pid "), "{e}");
        drop(held);
        RunLock::take(dir.path(), "resume").unwrap();
    }

    #[test]
    fn a_copy_has_another_identity() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        assert_ne!(identity(a.path()).unwrap(), identity(b.path()).unwrap());
        assert_eq!(identity(a.path()).unwrap(), identity(a.path()).unwrap());
    }
}
