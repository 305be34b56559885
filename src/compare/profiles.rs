//! `compare --profiles DIR`: for each compared cell whose runs both hold server profiles
//! (`profiles/`, `profile:` in the matrix), the differential flame graph of the baseline's
//! stacks against the candidate's (every ok iteration of each side, the baseline scaled to
//! the candidate's samples), written to DIR and listed with the comparison (linked from
//! the Markdown, inlined in the HTML). For each cell both runs counted (`counted/`,
//! `counted: callgrind`), the exact differential profile: each function's instructions per
//! operation on both sides (`counted_diff`).

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use super::input::Run;
use super::join::Comparison;
use crate::model::{Dimension, ResultRow};
use crate::report::chart::flame;

/// One cell's differential flame graph.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProfileDiff {
    pub(crate) cell: String,
    /// Where it was written, as the user named the folder.
    pub(crate) file: String,
    #[serde(skip)]
    pub(crate) svg: String,
}

/// Draw the differential flame graph of each compared cell into `dir`.
pub(crate) fn draw(base: &Run, cand: &Run, c: &mut Comparison, dir: &Path) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let cells: Vec<_> = (c.changes.iter())
        .filter(|ch| seen.insert(ch.cell.clone()))
        .map(|ch| (ch.cell.clone(), ch.dims.clone()))
        .collect();
    for (cell, dims) in cells {
        let matches = |r: &&ResultRow| {
            r.is_ok()
                && dims
                    .iter()
                    .all(|(d, v)| Dimension::parse(d).is_none_or(|d| r.dim(d) == *v))
        };
        let parts: Vec<&str> = dims.values().map(String::as_str).collect();
        if let Some(diff) = super::counted_diff::of(base, cand, &matches, &cell, &parts, dir)? {
            c.counted_profiles.push(diff);
        }
        let (Some(before), Some(after)) = (stacks(base, &matches)?, stacks(cand, &matches)?) else {
            continue;
        };
        let name = crate::report::chart::file_name(&[&["flame-diff"], &parts[..]].concat());
        let svg = flame::svg(&flame::Flame {
            title: format!("Server CPU, baseline -> candidate (red: more, blue: less): {cell}"),
            folded: flame::differential(&before, &after)?,
        })?;
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        let path = dir.join(&name);
        crate::results::files::replace_file(&path, svg.as_bytes())?;
        c.profiles.push(ProfileDiff {
            cell,
            file: path.display().to_string(),
            svg,
        });
    }
    Ok(())
}

/// The folded stacks of every row of `run` that `matches`, one after the other (a stack's
/// counts add up); None when none was profiled.
fn stacks(run: &Run, matches: &impl Fn(&&ResultRow) -> bool) -> Result<Option<String>> {
    let mut all = String::new();
    for r in run.rows.iter().filter(matches) {
        if let Some(f) = crate::results::profiles::read(&run.path, r)? {
            all.push_str(&f);
            if !all.ends_with('\n') {
                all.push('\n');
            }
        }
    }
    Ok((!all.is_empty()).then_some(all))
}
