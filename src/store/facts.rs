//! What a run's manifest says that an analyst asks the store by: each cell's server image and
//! version (`cells.server_image`, `server_image_id`, `server_version`) and the matrix's
//! parameters (`runs.params_json`, one `run_params` row each). Kept as columns when a run is
//! stored, since SQLite and PostgreSQL read JSON with different functions.

use std::collections::HashMap;

use anyhow::Result;
use serde_json::Value;

use super::db::{insert_many, Db, Val};
use super::limits::{self, Columns};

/// The (server, config) pairs of a run's cells, each name within its cap.
const DEPLOYED: Columns = Columns(&[
    ("server", Some(limits::NAME)),
    ("config", Some(limits::NAME)),
]);

/// Write the facts of `manifest` (Null: the run has none) for the stored run `run` (its
/// `runs.id`; `run_key` its key), whose cells are stored.
pub(crate) fn write(db: &mut dyn Db, run: i64, run_key: &str, manifest: &Value) -> Result<()> {
    // The first deployment of each server and config, as `compare` reads the environment.
    let mut deployed: HashMap<(&str, &str), &Value> = HashMap::new();
    for d in manifest["deployments"].as_array().into_iter().flatten() {
        if let (Some(server), Some(config)) = (d["server"].as_str(), d["config"].as_str()) {
            deployed.entry((server, config)).or_insert(d);
        }
    }
    let cells = db.query(
        &format!(
            "SELECT DISTINCT {} FROM cells WHERE run_id = $1",
            DEPLOYED.sql()
        ),
        &[Val::Int(run)],
    )?;
    for cell in cells {
        let cell = (DEPLOYED.check(&cell)).map_err(|e| anyhow::anyhow!("a stored cell: {e}"))?;
        let (Some(server), Some(config)) = (cell[0].text(), cell[1].text()) else {
            continue;
        };
        let Some(d) = deployed.get(&(server, config)) else {
            continue; // a server the manifest does not know (an older rmatrix's run)
        };
        let image = &manifest["images"][server];
        db.execute(
            "UPDATE cells SET server_image = $1, server_image_id = $2, server_version = $3 \
             WHERE run_id = $4 AND server = $5 AND config = $6",
            &[
                text(&image["reference"]),
                text(&image["id"]),
                text(&d["version"]),
                Val::Int(run),
                server.into(),
                config.into(),
            ],
        )?;
    }
    let params = match &manifest["params"] {
        Value::Object(p) => p.clone(),
        _ => serde_json::Map::new(),
    };
    db.execute(
        "UPDATE runs SET params_json = $1 WHERE id = $2",
        &[
            Value::Object(params.clone()).to_string().into(),
            Val::Int(run),
        ],
    )?;
    let rows: Vec<Vec<Val>> = (params.iter())
        .map(|(name, value)| {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            vec![run_key.into(), name.as_str().into(), value.into()]
        })
        .collect();
    insert_many(db, "run_params (run_key, name, value)", &rows)
}

/// A manifest's text as a value; anything else (absent, a number) as NULL.
fn text(v: &Value) -> Val {
    v.as_str().map_or(Val::Null, Val::from)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::store::{Imported, Location, Store};

    /// A run's server versions and parameters are kept when it is stored, and once when a
    /// resumed copy replaces it.
    #[test]
    fn a_run_s_facts_are_kept_once_when_it_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let src = Path::new("tests/fixtures/store/nightly/2026-11-22T02-00-00-nightly");
        for f in ["manifest.json", "matrix.yaml", "results.csv"] {
            std::fs::copy(src.join(f), run.join(f)).unwrap();
        }
        let db = tmp.path().join("s.db");
        let mut s = Store::open(&Location::Sqlite(db.clone())).unwrap();
        assert_eq!(s.import(&run).unwrap(), Imported::New);
        let results = std::fs::read_to_string(run.join("results.csv")).unwrap();
        let again = results
            .lines()
            .nth(1)
            .unwrap()
            .replacen(",1,1,ok,", ",1,3,ok,", 1);
        assert!(again.contains(",1,3,ok,"), "{again}");
        std::fs::write(run.join("results.csv"), format!("{results}{again}\n")).unwrap();
        assert_eq!(s.import(&run).unwrap(), Imported::Updated);
        let c = rusqlite::Connection::open(&db).unwrap();
        let one = |sql: &str| -> String { c.query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(
            one("SELECT group_concat(name || '=' || value) FROM run_params"),
            "tag=11.4.5"
        );
        assert_eq!(one("SELECT params_json FROM runs"), r#"{"tag":"11.4.5"}"#);
        assert_eq!(
            one(
                "SELECT group_concat(s) FROM (SELECT DISTINCT server || ' ' || server_image \
                 || ' ' || server_version AS s FROM cell_runs ORDER BY s)"
            ),
            "mariadb mariadb:11.4.5 11.4.5-MariaDB-ubu2404,mysql-8.4 mysql:8.4.3 8.4.3"
        );
    }
}
