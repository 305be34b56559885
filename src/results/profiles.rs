//! `profiles/`: the server's folded stacks over each profiled iteration's measured phase
//! (`profile:`), one file per cell iteration: `frame;frame;frame count` lines, what
//! `perf script` gave folded by `inferno` (the input of `flamegraph.pl` and of the flame
//! graphs in charts/).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::ResultRow;

pub(crate) const PROFILES: &str = "profiles";

/// The file of a cell iteration's profile under `profiles/`, from names the matrix checked
/// (letters, digits, `.`, `_`, `-`; re-checked here for a stored run's rows); None for a
/// name that could not be one.
pub(crate) fn file_name(row: &ResultRow) -> Option<String> {
    use crate::input::untrusted;
    let names = [&row.server, &row.config, &row.workload];
    if names.iter().any(|n| untrusted::name("cell", n).is_err()) {
        return None;
    }
    if !row.engine.is_empty() && untrusted::sql_identifier("engine", &row.engine).is_err() {
        return None;
    }
    let mut parts = vec![
        row.server.clone(),
        row.config.clone(),
        row.engine.clone(),
        row.workload.clone(),
        format!("c{}", row.concurrency),
    ];
    if let Some(rate) = row.rate {
        parts.push(format!("r{rate}"));
    }
    parts.retain(|p| !p.is_empty());
    Some(format!("{}__{}.folded", parts.join("__"), row.iteration))
}

/// Write an iteration's folded stacks (whole, by a rename).
pub(crate) fn write(dir: &super::RunDir, row: &ResultRow, folded: &str) -> Result<()> {
    let Some(name) = file_name(row) else {
        return Ok(());
    };
    let folder = dir.file(PROFILES);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    super::rundir::replace_file(&folder.join(name), folded.as_bytes())
}

/// The folded stacks of `row`'s iteration in run directory `dir`, when it was profiled.
pub(crate) fn read(dir: &Path, row: &ResultRow) -> Result<Option<String>> {
    let Some(name) = file_name(row) else {
        return Ok(None);
    };
    let path: PathBuf = dir.join(PROFILES).join(name);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = crate::input::file::read(&path, crate::input::file::PROFILE)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text (folded stacks)", path.display()))?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_per_cell_iteration_and_no_name_from_outside() {
        let mut row = ResultRow {
            server: "mariadb-10.11".into(),
            config: "binlog-on".into(),
            engine: "InnoDB".into(),
            workload: "write".into(),
            concurrency: 2,
            iteration: 3,
            ..ResultRow::default()
        };
        assert_eq!(
            file_name(&row).unwrap(),
            "mariadb-10.11__binlog-on__InnoDB__write__c2__3.folded"
        );
        let tmp = tempfile::tempdir().unwrap();
        let dir = super::super::RunDir {
            path: tmp.path().to_path_buf(),
        };
        write(&dir, &row, "mariadbd;do_command 5\n").unwrap();
        assert_eq!(
            read(tmp.path(), &row).unwrap().as_deref(),
            Some("mariadbd;do_command 5\n")
        );
        row.iteration = 4;
        assert_eq!(read(tmp.path(), &row).unwrap(), None);
        row.server = "../../etc".into();
        assert_eq!(file_name(&row), None);
    }
}
