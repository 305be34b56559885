//! Stored runs back out, as `compare` and `history` read a run directory: a store is as
//! untrusted as a folder, so each run's rows go through results.csv's own checks and its
//! manifest through the manifest's.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;

use super::db::{Db, Val};
use super::limits::{self, Columns};
use crate::compare::input::Run;

/// The runs of matrix `matrix` (every run when None), in start order. `label` names the
/// store in messages.
pub(crate) fn runs(db: &mut dyn Db, label: &str, matrix: Option<&str>) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    each_run(db, label, matrix, |run, _| out.push(run))?;
    Ok(out)
}

/// The columns of a run read back, each text within its cap (`limits`).
const HEADS: Columns = Columns(&[
    ("r.id", None),
    ("r.instance", Some(limits::NAME)),
    ("r.run_id", Some(limits::NAME)),
    ("r.matrix_name", Some(limits::NAME)),
    ("r.report_metric", Some(limits::NAME)),
    ("r.started_at", Some(limits::NAME)),
    ("r.results_header", Some(limits::ROW)),
    ("r.row_header", Some(limits::ROW)),
    ("r.manifest_json", Some(limits::MANIFEST)),
    ("e.env_json", Some(limits::ENVIRONMENT)),
    ("r.source", Some(limits::NAME)),
]);

const LINES: Columns = Columns(&[("c.run_id", None), ("i.row_csv", Some(limits::ROW))]);

/// As `runs`, each given to `f` with its manifest (checked) as it is read: only one run's
/// manifest is parsed at a time.
pub(crate) fn each_run(
    db: &mut dyn Db,
    label: &str,
    matrix: Option<&str>,
    mut f: impl FnMut(Run, serde_json::Value),
) -> Result<()> {
    let (filter, params): (&str, Vec<Val>) = match matrix {
        Some(m) => ("WHERE r.matrix_name = $1", vec![m.into()]),
        None => ("", Vec::new()),
    };
    let heads = db.query(
        &format!(
            "SELECT {} FROM runs r JOIN environments e ON e.id = r.environment_id {filter} \
             ORDER BY r.started_at, r.id",
            HEADS.sql()
        ),
        &params,
    )?;
    let lines = db.query(
        &format!(
            "SELECT {} FROM iterations i JOIN cells c ON c.id = i.cell_id \
             JOIN runs r ON r.id = c.run_id {filter} ORDER BY c.run_id, i.ord",
            LINES.sql()
        ),
        &params,
    )?;
    let mut by_run: HashMap<i64, Vec<String>> = HashMap::new();
    for l in lines {
        let l = LINES
            .check(&l)
            .map_err(|e| anyhow::anyhow!("a stored row: {e}"))?;
        if let (Some(id), Some(line)) = (l[0].int(), l[1].text()) {
            by_run.entry(id).or_default().push(line.to_string());
        }
    }
    for h in heads {
        let id = h[0].int().unwrap_or_default();
        let h = HEADS
            .check(&h)
            .map_err(|e| anyhow::anyhow!("a stored run (id {id}): {e}"))?;
        let text = |i: usize| h[i].text().unwrap_or_default().to_string();
        // Where a refusal points: the store and the run in it.
        let at = PathBuf::from(format!("{label}#{}", text(2)));
        let Some((run, manifest)) = read_run(&at, h, by_run.remove(&id).unwrap_or_default())?
        else {
            continue;
        };
        f(run, manifest);
    }
    Ok(())
}

/// One stored run through results.csv's and the manifest's checks; None when it has no
/// `ok` row (no point in a series, as a folder's run without results).
fn read_run(
    at: &std::path::Path,
    h: &[Val],
    lines: Vec<String>,
) -> Result<Option<(Run, serde_json::Value)>> {
    let text = |i: usize| h[i].text().unwrap_or_default().to_string();
    let mut bytes = text(7).into_bytes();
    bytes.push(b'\n');
    for line in lines {
        // A line break inside a stored line would make two rows of one.
        if line.contains(['\n', '\r']) {
            anyhow::bail!("{}: a stored row spans lines", at.display());
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    let results = crate::results::check::parse_results(at, &bytes)?;
    if !results.rows.iter().any(crate::model::ResultRow::is_ok) {
        return Ok(None);
    }
    let manifest = crate::results::check::parse_manifest(at, &text(8))?;
    let columns: Vec<String> = serde_json::from_str(&text(6))
        .map_err(|e| anyhow::anyhow!("{}: its results header: {e}", at.display()))?;
    let env = serde_json::from_str(&text(9))
        .map_err(|e| anyhow::anyhow!("{}: its environment: {e}", at.display()))?;
    let run = Run {
        // The folder it was stored from: a run without an instance token is the same run as
        // its folder by that (`compare::input::identity`).
        path: PathBuf::from(text(10)),
        run_id: text(2),
        instance: text(1),
        started_at: text(5),
        report_metric: text(4),
        matrix_name: text(3),
        counted_by: (manifest["counted"].as_str().unwrap_or_default()).to_string(),
        rows: results.rows,
        columns,
        env,
    };
    Ok(Some((run, manifest)))
}

/// One line per stored run: what `rmatrix store list` prints.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Listed {
    pub(crate) run_id: String,
    pub(crate) matrix: String,
    pub(crate) started_at: String,
    pub(crate) iterations: i64,
    pub(crate) ok: i64,
    pub(crate) source: String,
}

const LISTED: Columns = Columns(&[
    ("r.run_id", Some(limits::NAME)),
    ("r.matrix_name", Some(limits::NAME)),
    ("r.started_at", Some(limits::NAME)),
    ("r.source", Some(limits::NAME)),
    (
        "(SELECT COUNT(*) FROM iterations i JOIN cells c ON c.id = i.cell_id \
          WHERE c.run_id = r.id)",
        None,
    ),
    (
        "(SELECT COUNT(*) FROM iterations i JOIN cells c ON c.id = i.cell_id \
          WHERE c.run_id = r.id AND i.status = 'ok')",
        None,
    ),
]);

pub(crate) fn list(db: &mut dyn Db, matrix: Option<&str>) -> Result<Vec<Listed>> {
    let (filter, params): (&str, Vec<Val>) = match matrix {
        Some(m) => ("WHERE r.matrix_name = $1", vec![m.into()]),
        None => ("", Vec::new()),
    };
    let rows = db.query(
        &format!(
            "SELECT {} FROM runs r {filter} ORDER BY r.started_at, r.id",
            LISTED.sql()
        ),
        &params,
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let r = LISTED
            .check(&r)
            .map_err(|e| anyhow::anyhow!("a stored run: {e}"))?;
        let text = |i: usize| r[i].text().unwrap_or_default().to_string();
        out.push(Listed {
            run_id: text(0),
            matrix: text(1),
            started_at: text(2),
            source: text(3),
            iterations: r[4].int().unwrap_or_default(),
            ok: r[5].int().unwrap_or_default(),
        });
    }
    Ok(out)
}
