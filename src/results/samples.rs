//! `samples.csv`: one line per cell iteration and second (sysbench's `--report-interval=1`),
//! appended as each iteration finishes.

use std::fs::OpenOptions;

use crate::input::file::SAMPLES;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::matrix::Cell;
use crate::measure::interval::Sample;
use crate::model::{CellKey, Dimension};

pub const SAMPLES_CSV: &str = "samples.csv";
/// The warm-up's seconds, in the same columns (numbered from its own start): kept apart so
/// that every reader of samples.csv sees the measured phase only.
pub(crate) const WARMUP_CSV: &str = "warmup.csv";

/// Where an iteration's per-second samples go; `disabled()` drops them (tests, tools).
#[derive(Debug, Clone, Default)]
pub struct SampleSink {
    path: Option<PathBuf>,
    cell: CellColumns,
}

#[derive(Debug, Clone, Default)]
struct CellColumns {
    server: String,
    config: String,
    engine: String,
    workload: String,
    concurrency: u32,
    iteration: u32,
    rate: Option<u32>,
}

#[derive(Serialize)]
struct SampleRow<'a> {
    server: &'a str,
    config: &'a str,
    engine: &'a str,
    workload: &'a str,
    concurrency: u32,
    iteration: u32,
    second: u32,
    threads: u32,
    tps: f64,
    qps: f64,
    reads_ps: f64,
    writes_ps: f64,
    others_ps: f64,
    lat_p95_ms: f64,
    errors_ps: f64,
    reconnects_ps: f64,
    /// Open loop's target rate of the cell (appended: the columns before it never move). A
    /// run is all open or all closed loop: a closed one's file has no such column.
    #[serde(skip_serializing_if = "Option::is_none")]
    rate: Option<u32>,
    /// Open loop: arrivals scheduled in this second.
    #[serde(skip_serializing_if = "Option::is_none")]
    target_ps: Option<f64>,
    /// The second's p99, empty where the driver has none (sysbench). Left out (outer None)
    /// when appending to a file written before the column existed (a resumed older run).
    #[serde(skip_serializing_if = "Option::is_none")]
    lat_p99_ms: Option<Option<f64>>,
    /// What the client wanted of its cores this second (results.csv's `client_busy_pct`),
    /// empty for an external tool; left out like `lat_p99_ms` in an older file.
    #[serde(skip_serializing_if = "Option::is_none")]
    client_busy_pct: Option<Option<f64>>,
}

impl SampleSink {
    pub fn new(dir: &super::RunDir, cell: &Cell, iteration: u32) -> SampleSink {
        SampleSink {
            path: Some(dir.file(SAMPLES_CSV)),
            cell: CellColumns {
                server: cell.server.clone(),
                config: cell.config.clone(),
                engine: cell.engine.clone().unwrap_or_default(),
                workload: cell.workload.clone(),
                concurrency: cell.concurrency,
                iteration,
                rate: cell.rate,
            },
        }
    }

    #[cfg(test)]
    pub(crate) fn disabled() -> SampleSink {
        SampleSink::default()
    }

    /// The same cell's warm-up seconds, which go to warmup.csv.
    pub(crate) fn warmup(mut self) -> SampleSink {
        self.path = self.path.map(|p| p.with_file_name(WARMUP_CSV));
        self
    }

    pub fn write(&self, samples: &[Sample]) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if samples.is_empty() {
            return Ok(());
        }
        let fresh = !path.exists();
        let with_p99 = fresh || super::stored_csv::has_column(path, SAMPLES, "lat_p99_ms")?;
        let with_client = fresh || super::stored_csv::has_column(path, SAMPLES, "client_busy_pct")?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        let c = &self.cell;
        let mut rows = Vec::with_capacity(samples.len());
        for s in samples {
            rows.push(SampleRow {
                server: &c.server,
                config: &c.config,
                engine: &c.engine,
                workload: &c.workload,
                concurrency: c.concurrency,
                iteration: c.iteration,
                second: s.second,
                threads: s.threads,
                tps: round2(s.tps),
                qps: round2(s.qps),
                reads_ps: round2(s.reads_ps),
                writes_ps: round2(s.writes_ps),
                others_ps: round2(s.others_ps),
                lat_p95_ms: round3(s.lat_pct_ms),
                errors_ps: round2(s.errors_ps),
                reconnects_ps: round2(s.reconnects_ps),
                rate: c.rate,
                target_ps: s.target_ps,
                lat_p99_ms: with_p99.then(|| s.lat_p99_ms.map(round3)),
                client_busy_pct: with_client.then(|| s.client_busy_pct.map(round2)),
            });
        }
        // One write for the iteration's lines: a kill leaves all of them or none.
        super::files::write_once(file, path, fresh, &rows)
    }
}

/// The per-second series of one column (`qps`, `tps`, `lat_p95_ms`, `lat_p99_ms`, or `served`: open loop's
/// served share of each second's target) of a run's samples.csv, by cell key
/// (`ResultRow::cell_key`) and iteration, in second order. An absent file is no samples; a
/// damaged one is an error naming the file and line.
pub(crate) type Series = std::collections::HashMap<(String, u32), Vec<f64>>;

pub(crate) fn read_series(path: &std::path::Path, column: &str) -> Result<Series> {
    #[derive(serde::Deserialize)]
    struct Line {
        server: String,
        config: String,
        engine: String,
        workload: String,
        concurrency: u32,
        iteration: u32,
        second: u32,
        tps: f64,
        qps: f64,
        lat_p95_ms: f64,
        #[serde(default)]
        rate: Option<u32>,
        #[serde(default)]
        target_ps: Option<f64>,
        #[serde(default)]
        lat_p99_ms: Option<f64>,
    }
    let mut out = Series::new();
    let Some(bytes) = super::stored_csv::bytes(path, crate::input::file::SAMPLES)? else {
        return Ok(out);
    };
    let mut points: std::collections::HashMap<(String, u32), Vec<(u32, f64)>> = Default::default();
    for (_, l) in super::stored_csv::deserialize::<Line>(path, &bytes)? {
        let v = match column {
            // Open loop: the share of the second's scheduled arrivals that were served, so
            // that a wave's own swing is not read as drift.
            "served" => match l.target_ps.filter(|t| *t > 0.0) {
                Some(t) => l.tps / t,
                None => continue,
            },
            "tps" => l.tps,
            "lat_p95_ms" => l.lat_p95_ms,
            // Absent in files of older runs and for sysbench: no series.
            "lat_p99_ms" => match l.lat_p99_ms {
                Some(v) => v,
                None => continue,
            },
            _ => l.qps,
        };
        let key = CellKey::of_columns(
            &l.server,
            &l.config,
            &l.engine,
            &l.workload,
            l.concurrency,
            l.rate,
        );
        points
            .entry((key.to_string(), l.iteration))
            .or_default()
            .push((l.second, v));
    }
    for (k, mut p) in points {
        p.sort_by_key(|x| x.0);
        out.insert(k, p.into_iter().map(|x| x.1).collect());
    }
    Ok(out)
}

/// Batch means of each (cell, iteration)'s per-second throughput in a run's samples.csv,
/// where its measurement was long enough for them (`stats::batch`): what the knee and limit
/// rules read for a level measured once.
#[derive(Debug, Default)]
pub(crate) struct ThroughputBatches(std::collections::HashMap<(String, u32), Vec<f64>>);

impl ThroughputBatches {
    pub(crate) fn read(dir: &super::RunDir) -> Result<ThroughputBatches> {
        let qps = read_series(&dir.file(SAMPLES_CSV), "qps")?;
        Ok(ThroughputBatches(
            qps.into_iter()
                .filter_map(|(k, s)| Some((k, crate::stats::batch_means(&s)?.means)))
                .collect(),
        ))
    }

    pub(crate) fn of(&self, r: &crate::model::ResultRow) -> Option<Vec<f64>> {
        self.0
            .get(&(r.cell_key().as_str().to_string(), r.iteration))
            .cloned()
    }
}

/// Keep the sample lines whose (cell key, iteration) `keep` accepts; the file is replaced in
/// one rename, and left alone when every line stays.
pub(crate) fn retain(
    path: &std::path::Path,
    cap: crate::input::file::Cap,
    keep: impl Fn(&CellKey, u32) -> bool,
) -> Result<()> {
    let Some(bytes) = super::stored_csv::bytes(path, cap)? else {
        return Ok(());
    };
    let (headers, records) = super::stored_csv::records(path, &bytes)?;
    let at = |name: &str| headers.iter().position(|h| h == name);
    // The key columns are named as the dimensions; `rate` is absent from closed-loop-only
    // files (older runs, operations.csv).
    let key_cols: Vec<(Dimension, Option<usize>)> =
        Dimension::ALL.map(|d| (d, at(d.name()))).into();
    let col = |d: Dimension| key_cols.iter().find(|(x, _)| *x == d).and_then(|(_, c)| *c);
    let missing = (Dimension::ALL.into_iter()).any(|d| d != Dimension::Rate && col(d).is_none());
    let Some(it) = at("iteration").filter(|_| !missing) else {
        anyhow::bail!("{}: not a samples file (columns missing)", path.display());
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&headers)?;
    let mut dropped = 0;
    for (_, rec) in records {
        let key = CellKey::of(|d| col(d).and_then(|c| rec.get(c)).unwrap_or("").to_string());
        let iteration: u32 = rec.get(it).unwrap_or("").parse().unwrap_or(0);
        if keep(&key, iteration) {
            w.write_record(&rec)?;
        } else {
            dropped += 1;
        }
    }
    if dropped == 0 {
        return Ok(());
    }
    let buf = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    super::files::replace_file(path, &buf)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_with_one_header() {
        let dir = tempfile::tempdir().unwrap();
        let run = super::super::RunDir {
            path: dir.path().to_path_buf(),
        };
        let cell = Cell {
            server: "s".into(),
            config: "c".into(),
            engine: None,
            workload: "w".into(),
            concurrency: 4,
            rate: None,
        };
        let s = Sample {
            target_ps: None,
            client_busy_pct: None,
            second: 1,
            threads: 4,
            tps: 10.0,
            qps: 200.0,
            reads_ps: 140.0,
            writes_ps: 40.0,
            others_ps: 20.0,
            lat_pct_ms: 1.23456,
            lat_p99_ms: None,
            errors_ps: 0.0,
            reconnects_ps: 0.0,
        };
        SampleSink::new(&run, &cell, 1)
            .write(std::slice::from_ref(&s))
            .unwrap();
        SampleSink::new(&run, &cell, 2).write(&[s]).unwrap();
        SampleSink::disabled().write(&[]).unwrap();
        let text = std::fs::read_to_string(dir.path().join(SAMPLES_CSV)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("server,config,engine,workload,concurrency,iteration,second"));
        assert_eq!(
            lines[2],
            "s,c,,w,4,2,1,4,10.0,200.0,140.0,40.0,20.0,1.235,0.0,0.0,,"
        );
    }
}
