//! `profiles/`: the server's folded stacks over each profiled iteration's measured phase
//! (`profile:`), one file per cell iteration: `frame;frame;frame count` lines, what
//! `perf script` gave folded by `inferno` (the input of `flamegraph.pl` and of the flame
//! graphs in charts/). A stored profile is checked as it is read: every line a stack and a
//! whole count, the counts adding up to at most 10^18 (CPU nanoseconds: 31 years), and no
//! control character in a frame's name (they would reach the SVG and the HTML report raw).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::ResultRow;

pub(crate) const PROFILES: &str = "profiles";

/// The file of a cell iteration's profile under `profiles/`, from names the matrix checked
/// (letters, digits, `.`, `_`, `-`; re-checked here for a stored run's rows); None for a
/// name that could not be one.
pub(crate) fn file_name(row: &ResultRow) -> Option<String> {
    Some(format!("{}.folded", iteration_stem(row)?))
}

/// `server__config__engine__workload__cN[__rR]__<iteration>` of a row's names checked as
/// [`file_name`] says: the stem of every per-iteration file.
pub(crate) fn iteration_stem(row: &ResultRow) -> Option<String> {
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
    Some(format!("{}__{}", parts.join("__"), row.iteration))
}

/// Write an iteration's folded stacks (whole, by a rename).
pub(crate) fn write(dir: &super::RunDir, row: &ResultRow, folded: &str) -> Result<()> {
    let Some(name) = file_name(row) else {
        return Ok(());
    };
    let folder = dir.file(PROFILES);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    super::files::replace_file(&folder.join(name), folded.as_bytes())
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
    check(&text).map_err(|(line, message)| super::check::Refused::BadRow {
        path: path.clone(),
        line,
        message,
    })?;
    Ok(Some(text))
}

/// The most a profile's counts add up to (CPU nanoseconds: 31 years), so that no sum of
/// them, nor a frame's share, overflows.
pub(crate) const MAX_SAMPLES: u64 = 1_000_000_000_000_000_000;

/// The first line of folded stacks `text` that a profile cannot have, and why.
pub(crate) fn check(text: &str) -> Result<(), (u64, String)> {
    let mut total: u64 = 0;
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let at = i as u64 + 1;
        let Some((stack, count)) = line.rsplit_once(' ') else {
            return Err((
                at,
                "a line of folded stacks is `frame;frame;... count`".into(),
            ));
        };
        if let Some(c) = stack.chars().find(|c| c.is_control()) {
            return Err((
                at,
                format!("a frame's name has the control character {c:?}"),
            ));
        }
        let count = count
            .parse::<u64>()
            .ok()
            .filter(|n| *n <= MAX_SAMPLES - total)
            .ok_or_else(|| {
                (
                    at,
                    format!(
                        "the count `{}` is no whole number or takes the profile's samples \
                         past 10^18",
                        crate::escape::terminal(count)
                    ),
                )
            })?;
        total += count;
    }
    Ok(())
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

    #[test]
    fn counts_past_the_cap_and_control_characters_are_refused() {
        assert_eq!(check("a;b 5\n\na;c 1000000000000000000\n"), Err((3, "the count `1000000000000000000` is no whole number or takes the profile's samples past 10^18".into())));
        assert!(check("a;b 5\na;c 999999999999999995\n").is_ok());
        let max = format!("a;b {m}\na;c {m}\n", m = u64::MAX);
        assert_eq!(check(&max).unwrap_err().0, 1);
        assert_eq!(
            check("a;b 1\nx;\u{1b}[31m 1\n"),
            Err((
                2,
                "a frame's name has the control character '\\u{1b}'".into()
            ))
        );
        assert_eq!(check("a;b\n").unwrap_err().0, 1);
        assert_eq!(check("a;b -1\n").unwrap_err().0, 1);
    }
}
