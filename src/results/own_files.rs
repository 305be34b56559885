//! Whether a path is one of a run directory's own files (itself, or a link or a hard link to
//! one): an output file named on the command line must not be, or writing it would destroy
//! the run it reports on (`compare --junit BASE/results.csv`).

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// How deep a run's folders go (`servers/<deployment>/`, `profiles/`, `charts/`).
const DEPTH: usize = 3;

/// True when the existing file at `path` is a file of the run directory `run`.
pub(crate) fn is_own_file(run: &Path, path: &Path) -> bool {
    let Ok(target) = std::fs::metadata(path) else {
        return false;
    };
    within(run, (target.dev(), target.ino()), DEPTH)
}

fn within(dir: &Path, id: (u64, u64), depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        // The entry itself, not what a link in the run points to: that is not the run's.
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            return false;
        };
        match m.is_dir() {
            true => depth > 1 && within(&e.path(), id, depth - 1),
            false => (m.dev(), m.ino()) == id,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_file_its_links_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir_all(run.join("servers/a")).unwrap();
        std::fs::write(run.join("results.csv"), "x").unwrap();
        std::fs::write(run.join("servers/a/my.cnf"), "x").unwrap();
        std::fs::write(tmp.path().join("junit.xml"), "x").unwrap();
        std::fs::hard_link(run.join("results.csv"), tmp.path().join("hard")).unwrap();
        std::os::unix::fs::symlink(run.join("servers/a/my.cnf"), tmp.path().join("soft")).unwrap();
        assert!(is_own_file(&run, &run.join("results.csv")));
        assert!(is_own_file(&run, &run.join("./servers/../results.csv")));
        assert!(is_own_file(&run, &tmp.path().join("hard")));
        assert!(is_own_file(&run, &tmp.path().join("soft")));
        assert!(!is_own_file(&run, &tmp.path().join("junit.xml")));
        assert!(!is_own_file(&run, &tmp.path().join("new.xml")));
    }
}
