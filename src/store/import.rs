//! A run directory into the store: read through the same checks `compare` applies to it,
//! then written in one transaction. A run already stored (the same instance) with the same
//! content is left as it is; one whose content changed since (a `--resume` added rows) is
//! replaced.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use super::db::{insert_many, placeholders, Db, Val};
use super::limits::{self, Columns};
use super::schema::now;
use super::typed;
use crate::compare::input::{load_run, Run};
use crate::model::{CellKey, ResultRow};
use crate::results::rundir::{MANIFEST, MATRIX_COPY, RESULTS_CSV};

/// What an import did with one run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Imported {
    New,
    /// Stored before with other content (a resumed run): replaced.
    Updated,
    /// Stored before with the same content.
    Unchanged,
}

/// The stored copy of a run being imported: its id and digest (within its cap).
const STORED: Columns = Columns(&[("id", None), ("content_digest", Some(limits::NAME))]);

pub(crate) fn import_dir(db: &mut dyn Db, dir: &Path) -> Result<Imported> {
    let run = load_run(dir)?;
    let read = |name: &str, cap| -> Result<String> {
        Ok(crate::input::file::read_text_optional(&dir.join(name), cap)?.unwrap_or_default())
    };
    let manifest = read(MANIFEST, crate::input::file::MANIFEST)?;
    let matrix = read(MATRIX_COPY, crate::input::file::MATRIX_COPY)?;
    let results = crate::input::file::read(&dir.join(RESULTS_CSV), crate::input::file::RESULTS)?;
    let digest = hex(&Sha256::new()
        .chain_update(&results)
        .chain_update(manifest.as_bytes())
        .finalize());
    let samples = Samples::read(dir)?;
    let counters =
        crate::results::counters::read(&dir.join(crate::results::counters::COUNTERS_CSV))?;

    db.batch("BEGIN")?;
    let done = (|| -> Result<Imported> {
        let instance = key_of(&run);
        let old = db.query(
            &format!("SELECT {} FROM runs WHERE run_key = $1", STORED.sql()),
            &[instance.as_str().into()],
        )?;
        let old = (old.iter())
            .map(|r| {
                STORED
                    .check(r)
                    .map_err(|e| anyhow::anyhow!("the run stored before: {e}"))
            })
            .collect::<Result<Vec<_>>>()?;
        let outcome = match old.first() {
            Some(r) if r.get(1).and_then(Val::text) == Some(digest.as_str()) => {
                return Ok(Imported::Unchanged)
            }
            Some(r) => {
                db.execute("DELETE FROM runs WHERE id = $1", &[r[0].clone()])?;
                Imported::Updated
            }
            None => Imported::New,
        };
        let env = environment(db, &run)?;
        let header = crate::results::check::known_columns();
        let run_id = insert_id(
            db,
            "INSERT INTO runs (run_key, instance, run_id, matrix_name, report_metric, started_at, source, \
             environment_id, results_header, row_header, manifest_json, matrix_yaml, \
             content_digest, imported_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
            &[
                instance.as_str().into(),
                run.instance.as_str().into(),
                run.run_id.as_str().into(),
                run.matrix_name.as_str().into(),
                run.report_metric.as_str().into(),
                run.started_at.as_str().into(),
                source_of(dir).into(),
                Val::Int(env),
                serde_json::to_string(&run.columns)?.into(),
                header.iter().collect::<Vec<_>>().join(",").into(),
                manifest.as_str().into(),
                matrix.into(),
                digest.as_str().into(),
                now().into(),
            ],
        )?;
        let iterations = rows(db, run_id, &run.rows)?;
        let manifest = match manifest.is_empty() {
            true => serde_json::Value::Null, // a run without manifest.json
            false => serde_json::from_str(&manifest)?,
        };
        super::facts::write(db, run_id, &instance, &manifest)?;
        samples.write(db, &iterations)?;
        write_counters(db, &iterations, &counters)?;
        Ok(outcome)
    })();
    match done {
        Ok(outcome) => {
            db.batch(match outcome {
                Imported::Unchanged => "ROLLBACK",
                _ => "COMMIT",
            })?;
            Ok(outcome)
        }
        Err(e) => {
            let _ = db.batch("ROLLBACK");
            Err(e.context(format!("failed to store the run {}", dir.display())))
        }
    }
}

/// The store's key of a run: its instance token; a run of an older rmatrix has none, and
/// its id and start stand in.
fn key_of(run: &Run) -> String {
    match run.instance.is_empty() {
        false => run.instance.clone(),
        true => format!("{}@{}", run.run_id, run.started_at),
    }
}

/// Where the run came from, as `compare::input::identity` names a run without an instance
/// token (its directory, canonical): a store's copy and its folder are then one run.
fn source_of(dir: &Path) -> String {
    (dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
        .display()
        .to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn insert_id(db: &mut dyn Db, sql: &str, params: &[Val]) -> Result<i64> {
    let rows = db.query(sql, params)?;
    (rows.first().and_then(|r| r.first()).and_then(Val::int))
        .context("the database returned no id for a new row")
}

/// The run's environment row, shared with every run that had the same one.
fn environment(db: &mut dyn Db, run: &Run) -> Result<i64> {
    let json = serde_json::to_string(&run.env)?;
    let digest = hex(&Sha256::digest(json.as_bytes()));
    let found = db.query(
        "SELECT id FROM environments WHERE digest = $1",
        &[digest.as_str().into()],
    )?;
    if let Some(id) = found.first().and_then(|r| r.first()).and_then(Val::int) {
        return Ok(id);
    }
    let e = &run.env;
    insert_id(
        db,
        "INSERT INTO environments (digest, rmatrix_version, cpu_model, cpus, kernel, \
         memory_bytes, env_json) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        &[
            digest.into(),
            e.rmatrix_version.as_str().into(),
            e.cpu_model.as_str().into(),
            Some(e.cpus).into(),
            e.kernel.as_str().into(),
            Some(e.memory_bytes).into(),
            json.into(),
        ],
    )
}

/// The run's cells and its rows in file order, each column typed beside the line; returns
/// each (cell, iteration)'s id (the last row of an iteration: a failed attempt's row comes
/// before the one that counted).
fn rows(db: &mut dyn Db, run_id: i64, rows: &[ResultRow]) -> Result<HashMap<(CellKey, u32), i64>> {
    let columns = typed::iteration_columns();
    let insert = format!(
        "INSERT INTO iterations (cell_id, ord, row_csv, {}) VALUES ({}) RETURNING id",
        columns.join(", "),
        placeholders(columns.len() + 3)
    );
    let mut cells: HashMap<CellKey, i64> = HashMap::new();
    let mut out = HashMap::new();
    for (ord, r) in rows.iter().enumerate() {
        let key = r.cell_key();
        let cell = match cells.get(&key) {
            Some(id) => *id,
            None => {
                let id = insert_id(
                    db,
                    "INSERT INTO cells (run_id, server, config, engine, workload, kind, \
                     concurrency, rate) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                    &[
                        Val::Int(run_id),
                        r.server.as_str().into(),
                        r.config.as_str().into(),
                        r.engine.as_str().into(),
                        r.workload.as_str().into(),
                        r.kind.as_str().into(),
                        Some(r.concurrency).into(),
                        r.rate.into(),
                    ],
                )?;
                cells.insert(key.clone(), id);
                id
            }
        };
        let mut values = vec![Val::Int(cell), Val::Int(ord as i64), csv_line(r)?.into()];
        values.extend(typed::values(r, &columns)?);
        let id = insert_id(db, &insert, &values)?;
        out.insert((key, r.iteration), id);
    }
    Ok(out)
}

/// A row as one results.csv line in this version's columns (`check::known_columns`).
pub(crate) fn csv_line(r: &ResultRow) -> Result<String> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.serialize(r)?;
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(String::from_utf8(bytes)?.trim_end().to_string())
}

fn write_counters(
    db: &mut dyn Db,
    iterations: &HashMap<(CellKey, u32), i64>,
    counters: &crate::results::counters::Counters,
) -> Result<()> {
    let mut values = Vec::new();
    for ((key, iteration), status) in counters {
        let Some(id) = iterations.get(&(key.clone(), *iteration)) else {
            continue; // counters of an iteration results.csv does not have (a torn row)
        };
        for (name, delta) in status {
            values.push(vec![
                Val::Int(*id),
                name.as_str().into(),
                Some(*delta).into(),
            ]);
        }
    }
    insert_many(db, "counters (iteration_id, name, delta)", &values)
}

/// samples.csv's lines: the cell and iteration they belong to, the second, the main rates
/// as columns and every column as JSON.
struct Samples(
    Vec<(
        CellKey,
        u32,
        i64,
        serde_json::Map<String, serde_json::Value>,
    )>,
);

impl Samples {
    fn read(dir: &Path) -> Result<Samples> {
        let path = dir.join(crate::results::samples::SAMPLES_CSV);
        let Some(bytes) = crate::results::stored_csv::bytes(&path, crate::input::file::SAMPLES)?
        else {
            return Ok(Samples(Vec::new()));
        };
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let header = reader.headers()?.clone();
        let mut out = Vec::new();
        for (i, rec) in reader.records().enumerate() {
            let rec = rec.with_context(|| format!("{}: line {}", path.display(), i + 2))?;
            let get = |name: &str| {
                (header.iter().position(|h| h == name))
                    .and_then(|p| rec.get(p))
                    .unwrap_or("")
            };
            let number = |name: &str| get(name).parse::<u32>().ok();
            let (Some(concurrency), Some(iteration), Some(second)) =
                (number("concurrency"), number("iteration"), number("second"))
            else {
                anyhow::bail!(
                    "{}: line {}: a sample without its cell's numbers",
                    path.display(),
                    i + 2
                );
            };
            let key = CellKey::of_columns(
                get("server"),
                get("config"),
                get("engine"),
                get("workload"),
                concurrency,
                number("rate"),
            );
            let mut values = serde_json::Map::new();
            for (h, v) in header.iter().zip(rec.iter()) {
                let value = match v.parse::<f64>() {
                    Ok(f) if f.is_finite() => serde_json::json!(f),
                    _ => serde_json::json!(v),
                };
                values.insert(h.to_string(), value);
            }
            out.push((key, iteration, i64::from(second), values));
        }
        Ok(Samples(out))
    }

    fn write(&self, db: &mut dyn Db, iterations: &HashMap<(CellKey, u32), i64>) -> Result<()> {
        let num = |m: &serde_json::Map<String, serde_json::Value>, k: &str| -> Val {
            m.get(k).and_then(serde_json::Value::as_f64).into()
        };
        let rows: Vec<Vec<Val>> = (self.0.iter())
            .filter_map(|(key, iteration, second, values)| {
                let id = *iterations.get(&(key.clone(), *iteration))?;
                Some(vec![
                    Val::Int(id),
                    Val::Int(*second),
                    num(values, "qps"),
                    num(values, "tps"),
                    num(values, "lat_p95_ms"),
                    num(values, "errors_ps"),
                    serde_json::Value::Object(values.clone()).to_string().into(),
                ])
            })
            .collect();
        insert_many(
            db,
            "samples (iteration_id, second, qps, tps, lat_p95_ms, errors_ps, values_json)",
            &rows,
        )
    }
}
