//! Stored runs back out, as `compare` and `history` read a run directory: a store is as
//! untrusted as a folder, so each run's rows go through results.csv's own checks and its
//! manifest through the manifest's.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;

use super::db::{Db, Val};
use crate::compare::input::Run;

/// The runs of matrix `matrix` (every run when None), in start order. `label` names the
/// store in messages.
pub(crate) fn runs(db: &mut dyn Db, label: &str, matrix: Option<&str>) -> Result<Vec<Run>> {
    Ok(with_manifests(db, label, matrix)?
        .into_iter()
        .map(|(run, _)| run)
        .collect())
}

/// As `runs`, each with its manifest (checked).
pub(crate) fn with_manifests(
    db: &mut dyn Db,
    label: &str,
    matrix: Option<&str>,
) -> Result<Vec<(Run, serde_json::Value)>> {
    let (filter, params): (&str, Vec<Val>) = match matrix {
        Some(m) => ("WHERE r.matrix_name = $1", vec![m.into()]),
        None => ("", Vec::new()),
    };
    let heads = db.query(
        &format!(
            "SELECT r.id, r.instance, r.run_id, r.matrix_name, r.report_metric, r.started_at, \
             r.results_header, r.row_header, r.manifest_json, e.env_json, r.source \
             FROM runs r JOIN environments e ON e.id = r.environment_id {filter} \
             ORDER BY r.started_at, r.id"
        ),
        &params,
    )?;
    let lines = db.query(
        &format!(
            "SELECT c.run_id, i.row_csv FROM iterations i JOIN cells c ON c.id = i.cell_id \
             JOIN runs r ON r.id = c.run_id {filter} ORDER BY c.run_id, i.ord"
        ),
        &params,
    )?;
    let mut by_run: HashMap<i64, Vec<String>> = HashMap::new();
    for l in lines {
        if let (Some(id), Some(line)) = (l[0].int(), l[1].text()) {
            by_run.entry(id).or_default().push(line.to_string());
        }
    }
    let mut out = Vec::with_capacity(heads.len());
    for h in heads {
        let text = |i: usize| h[i].text().unwrap_or_default().to_string();
        let id = h[0].int().unwrap_or_default();
        // Where a refusal points: the store and the run in it.
        let at = PathBuf::from(format!("{label}#{}", text(2)));
        let mut bytes = text(7).into_bytes();
        bytes.push(b'\n');
        for line in by_run.remove(&id).unwrap_or_default() {
            // A line break inside a stored line would make two rows of one.
            if line.contains(['\n', '\r']) {
                anyhow::bail!("{}: a stored row spans lines", at.display());
            }
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        let results = crate::results::check::parse_results(&at, &bytes)?;
        if !results.rows.iter().any(crate::model::ResultRow::is_ok) {
            continue; // no point in a series, as a folder's run without results
        }
        let manifest = crate::results::check::parse_manifest(&at, &text(8))?;
        let columns: Vec<String> = serde_json::from_str(&text(6))
            .map_err(|e| anyhow::anyhow!("{}: its results header: {e}", at.display()))?;
        let env = serde_json::from_str(&text(9))
            .map_err(|e| anyhow::anyhow!("{}: its environment: {e}", at.display()))?;
        out.push((
            Run {
                // The folder it was stored from: a run without an instance token is the same
                // run as its folder by that (`compare::input::identity`).
                path: PathBuf::from(text(10)),
                run_id: text(2),
                instance: text(1),
                started_at: text(5),
                report_metric: text(4),
                matrix_name: text(3),
                rows: results.rows,
                columns,
                env,
            },
            manifest,
        ));
    }
    Ok(out)
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

pub(crate) fn list(db: &mut dyn Db, matrix: Option<&str>) -> Result<Vec<Listed>> {
    let (filter, params): (&str, Vec<Val>) = match matrix {
        Some(m) => ("WHERE r.matrix_name = $1", vec![m.into()]),
        None => ("", Vec::new()),
    };
    let rows = db.query(
        &format!(
            "SELECT r.run_id, r.matrix_name, r.started_at, r.source, \
             (SELECT COUNT(*) FROM iterations i JOIN cells c ON c.id = i.cell_id \
              WHERE c.run_id = r.id), \
             (SELECT COUNT(*) FROM iterations i JOIN cells c ON c.id = i.cell_id \
              WHERE c.run_id = r.id AND i.status = 'ok') \
             FROM runs r {filter} ORDER BY r.started_at, r.id"
        ),
        &params,
    )?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let text = |i: usize| r[i].text().unwrap_or_default().to_string();
            Listed {
                run_id: text(0),
                matrix: text(1),
                started_at: text(2),
                source: text(3),
                iterations: r[4].int().unwrap_or_default(),
                ok: r[5].int().unwrap_or_default(),
            }
        })
        .collect())
}
