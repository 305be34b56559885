//! `counted/`: a counted iteration's instructions by function (`counted: callgrind`), one
//! file per cell iteration, `own<TAB>inclusive<TAB>function` lines, most inclusive first:
//! what `compare --profiles` diffs between two builds. The names come from the server's
//! binary (a source build's code is untrusted): written without control characters and
//! shortened, and checked again as they are read.

use std::path::Path;

use anyhow::{Context, Result};

use super::check::Refused;
use super::profiles::iteration_stem;
use crate::measure::counted::Function;
use crate::model::ResultRow;

pub(crate) const COUNTED: &str = "counted";

/// The longest function name kept (a C++ template's can run to kilobytes).
const MAX_NAME: usize = 300;

/// The table's text.
pub(crate) fn render(functions: &[Function]) -> String {
    let mut out = String::new();
    for f in functions {
        let mut name: String = f.name.chars().filter(|c| !c.is_control()).collect();
        if name.chars().count() > MAX_NAME {
            name = name.chars().take(MAX_NAME).collect::<String>() + "…";
        }
        out.push_str(&format!("{}\t{}\t{name}\n", f.own, f.inclusive));
    }
    out
}

fn file_name(row: &ResultRow) -> Option<String> {
    Some(format!("{}.tsv", iteration_stem(row)?))
}

/// Write an iteration's table (whole, by a rename).
pub(crate) fn write(dir: &super::RunDir, row: &ResultRow, table: &str) -> Result<()> {
    let Some(name) = file_name(row) else {
        return Ok(());
    };
    let folder = dir.file(COUNTED);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    super::files::replace_file(&folder.join(name), table.as_bytes())
}

/// The functions of `row`'s iteration in run directory `dir`, when it was counted.
pub(crate) fn read(dir: &Path, row: &ResultRow) -> Result<Option<Vec<Function>>> {
    let Some(name) = file_name(row) else {
        return Ok(None);
    };
    let path = dir.join(COUNTED).join(name);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = crate::input::file::read(&path, crate::input::file::PROFILE)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
    let functions = parse(&text).map_err(|(line, message)| Refused::BadRow {
        path: path.clone(),
        line,
        message,
    })?;
    Ok(Some(functions))
}

/// The table, or its first bad line and why.
fn parse(text: &str) -> Result<Vec<Function>, (u64, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let bad = |why: &str| (i as u64 + 1, why.to_string());
        let mut parts = line.splitn(3, '\t');
        let (Some(own), Some(inclusive), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("a line is `own<TAB>inclusive<TAB>function`"));
        };
        // Counts of one phase: far below 2^63, so that sums over iterations cannot overflow.
        let count = |t: &str| t.parse::<u64>().ok().filter(|n| *n < 1 << 56);
        let (Some(own), Some(inclusive)) = (count(own), count(inclusive)) else {
            return Err(bad("a count is no whole number below 2^56"));
        };
        if name.chars().any(|c| c.is_control()) || name.chars().count() > MAX_NAME + 1 {
            return Err(bad(
                "a function's name has a control character or is too long",
            ));
        }
        out.push(Function {
            name: name.to_string(),
            own,
            inclusive,
        });
        if out.len() > crate::measure::counted::MAX_FUNCTIONS {
            return Err(bad("more functions than a counted phase keeps"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_written_clean_and_read_back() {
        let f = |name: &str, own, inclusive| Function {
            name: name.into(),
            own,
            inclusive,
        };
        let long = "x".repeat(1000);
        let table = render(&[
            f("getCommand", 49, 4000),
            f("bad\u{1b}[31mname", 1, 2),
            f(&long, 0, 1),
        ]);
        let back = parse(&table).unwrap();
        assert_eq!(back[0], f("getCommand", 49, 4000));
        assert_eq!(back[1].name, "bad[31mname");
        assert_eq!(back[2].name.chars().count(), MAX_NAME + 1);
        for bad in [
            "1\t2",
            "x\t2\tf",
            "1\t2\tf\u{7}",
            "99999999999999999999\t1\tf",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
