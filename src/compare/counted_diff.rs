//! The exact differential profile of two counted runs of a cell (`compare --profiles`):
//! each function's instructions per operation (its own lines, and inclusive of what it
//! called) on both sides, from the `counted/` tables of every ok iteration. Counts, not
//! samples: a function that gained 49 instructions per GET shows +49.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use super::input::Run;
use crate::model::ResultRow;

/// The functions shown in the Markdown (the file in DIR holds all of them).
const SHOWN: usize = 15;

/// One cell's differential profile.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CountedDiff {
    pub(crate) cell: String,
    /// The whole table (CSV), as the user named the folder.
    pub(crate) file: String,
    /// The functions whose own instructions per operation moved most, most first.
    pub(crate) functions: Vec<FunctionDiff>,
}

/// One function's instructions per operation, baseline and candidate.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct FunctionDiff {
    pub(crate) function: String,
    pub(crate) baseline_own: f64,
    pub(crate) candidate_own: f64,
    pub(crate) baseline_inclusive: f64,
    pub(crate) candidate_inclusive: f64,
}

impl FunctionDiff {
    pub(crate) fn own_change(&self) -> f64 {
        self.candidate_own - self.baseline_own
    }

    pub(crate) fn inclusive_change(&self) -> f64 {
        self.candidate_inclusive - self.baseline_inclusive
    }
}

/// Per function (own, inclusive) instructions per operation over the rows of `run` that
/// `matches` and were counted; None when none was.
fn per_op(
    run: &Run,
    matches: &impl Fn(&&ResultRow) -> bool,
) -> Result<Option<BTreeMap<String, (f64, f64)>>> {
    let mut sums: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut ops: u64 = 0;
    for r in run.rows.iter().filter(matches) {
        let (Some(functions), Some(q)) =
            (crate::results::functions::read(&run.path, r)?, r.queries)
        else {
            continue;
        };
        ops = ops.saturating_add(q);
        for f in functions {
            let s = sums.entry(f.name).or_default();
            s.0 = s.0.saturating_add(f.own);
            s.1 = s.1.saturating_add(f.inclusive);
        }
    }
    if ops == 0 {
        return Ok(None);
    }
    let per = |n: u64| n as f64 / ops as f64;
    Ok(Some(
        sums.into_iter()
            .map(|(name, (own, incl))| (name, (per(own), per(incl))))
            .collect(),
    ))
}

/// Both sides' tables joined, the largest change of own instructions first (then of
/// inclusive ones).
fn join(
    base: &BTreeMap<String, (f64, f64)>,
    cand: &BTreeMap<String, (f64, f64)>,
) -> Vec<FunctionDiff> {
    let names: std::collections::BTreeSet<&String> = base.keys().chain(cand.keys()).collect();
    let mut all: Vec<FunctionDiff> = names
        .into_iter()
        .map(|name| {
            let (bo, bi) = base.get(name).copied().unwrap_or_default();
            let (co, ci) = cand.get(name).copied().unwrap_or_default();
            FunctionDiff {
                function: name.clone(),
                baseline_own: bo,
                candidate_own: co,
                baseline_inclusive: bi,
                candidate_inclusive: ci,
            }
        })
        .collect();
    all.sort_by(|a, b| {
        let key = |f: &FunctionDiff| (f.own_change().abs(), f.inclusive_change().abs());
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    all
}

/// The differential profile of the cell `matches` selects, its whole table written to
/// `dir`; None unless both runs counted it.
pub(crate) fn of(
    base: &Run,
    cand: &Run,
    matches: &impl Fn(&&ResultRow) -> bool,
    cell: &str,
    parts: &[&str],
    dir: &Path,
) -> Result<Option<CountedDiff>> {
    let (Some(b), Some(c)) = (per_op(base, matches)?, per_op(cand, matches)?) else {
        return Ok(None);
    };
    let all = join(&b, &c);
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let name =
        crate::report::chart::file_name_with(&[&["instructions-diff"], parts].concat(), "csv");
    let path = dir.join(name);
    let mut w = csv::Writer::from_writer(Vec::new());
    for f in &all {
        // A spreadsheet must not take a name for a formula.
        w.serialize((
            crate::escape::csv_text(&f.function),
            f.baseline_own,
            f.candidate_own,
            f.own_change(),
            f.baseline_inclusive,
            f.candidate_inclusive,
            f.inclusive_change(),
        ))?;
    }
    let header = "function,baseline_own,candidate_own,own_change,baseline_inclusive,\
                  candidate_inclusive,inclusive_change\n";
    let body = w.into_inner().context("failed to write the table")?;
    let text = [header.as_bytes(), &body].concat();
    crate::results::files::replace_file(&path, &text)?;
    Ok(Some(CountedDiff {
        cell: cell.to_string(),
        file: path.display().to_string(),
        functions: all.into_iter().take(SHOWN).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_that_gained_comes_first() {
        let m = |v: &[(&str, f64, f64)]| {
            v.iter()
                .map(|(n, o, i)| (n.to_string(), (*o, *i)))
                .collect::<BTreeMap<_, _>>()
        };
        let base = m(&[
            ("getCommand", 10.0, 900.0),
            ("main", 5.0, 4700.0),
            ("gone", 3.0, 3.0),
        ]);
        let cand = m(&[
            ("getCommand", 59.0, 949.0),
            ("main", 5.0, 4749.0),
            ("new", 1.0, 1.0),
        ]);
        let j = join(&base, &cand);
        assert_eq!(j[0].function, "getCommand");
        assert_eq!((j[0].own_change(), j[0].inclusive_change()), (49.0, 49.0));
        assert_eq!(j[1].function, "gone");
        assert_eq!(j[1].own_change(), -3.0);
        assert_eq!(j.len(), 4);
    }
}
