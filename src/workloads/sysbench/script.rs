//! Which test sysbench runs. A Lua script can `os.execute` anything, so a matrix names either
//! one of sysbench's bundled database tests, or the file name of a script in the folder the
//! user allows with `RMATRIX_SYSBENCH_SCRIPTS`: never a path of its own.

use std::path::{Path, PathBuf};

use crate::input::untrusted::printable;

/// The variable naming the folder of Lua scripts a matrix may run.
pub(crate) const SCRIPTS_ENV: &str = "RMATRIX_SYSBENCH_SCRIPTS";

/// sysbench 1.0's bundled database tests (its built-in `cpu`, `fileio`... load no server).
pub(crate) const BUNDLED: [&str; 11] = [
    "bulk_insert",
    "oltp_delete",
    "oltp_insert",
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_write_only",
    "select_random_points",
    "select_random_ranges",
];

/// The folder `RMATRIX_SYSBENCH_SCRIPTS` names, when set and not empty.
pub(crate) fn scripts_dir() -> Option<PathBuf> {
    std::env::var_os(SCRIPTS_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// What sysbench is given for `test`: a bundled name as it is, a script's file name as its
/// path in `dir`. Refused: a path, a script without `dir`, a file `dir` does not have.
pub(crate) fn resolve(test: &str, dir: Option<&Path>) -> Result<String, String> {
    if BUNDLED.contains(&test) {
        return Ok(test.to_string());
    }
    let file_name = test.ends_with(".lua")
        && test.len() <= 128
        && !test.starts_with(['.', '-'])
        && test
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !file_name {
        return Err(format!(
            "sysbench test `{}` is neither a bundled test nor a script's file name \
             (`my_test.lua`, no folder: a matrix names no path on this machine); bundled \
             tests: {}",
            printable(test),
            BUNDLED.join(", ")
        ));
    }
    let Some(dir) = dir else {
        return Err(format!(
            "sysbench script `{test}` runs only from a folder you allow: set {SCRIPTS_ENV} \
             to the folder that holds it (a Lua script can run any command)"
        ));
    };
    let path = dir.join(test);
    if !path.is_file() {
        return Err(format!(
            "no sysbench script `{test}` in {} ({SCRIPTS_ENV})",
            printable(&dir.display().to_string())
        ));
    }
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_names_and_scripts_from_the_allowed_folder() {
        assert_eq!(resolve("oltp_read_write", None).unwrap(), "oltp_read_write");
        for bad in [
            "/tmp/x.lua",
            "../x.lua",
            "x/y.lua",
            "--help",
            "-x.lua",
            "cpu",
            "",
        ] {
            assert!(resolve(bad, None).is_err(), "{bad}");
        }
        assert!(resolve("mine.lua", None).unwrap_err().contains(SCRIPTS_ENV));
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("mine.lua"), "-- a test\n").unwrap();
        let got = resolve("mine.lua", Some(tmp.path())).unwrap();
        assert_eq!(got, tmp.path().join("mine.lua").display().to_string());
        assert!(resolve("other.lua", Some(tmp.path()))
            .unwrap_err()
            .contains("no sysbench script"));
        assert!(resolve("/etc/x.lua", Some(tmp.path())).is_err());
    }
}
