//! The run directory: one folder per run, never overwritten. Results are appended as each
//! iteration finishes, so a run killed midway keeps what it measured.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::files::{cut_torn_line, replace_file, write_once};
use crate::measure::counters::Status;
use crate::model::row::ResultRow;

pub(crate) const RESULTS_CSV: &str = "results.csv";
pub(crate) const MATRIX_COPY: &str = "matrix.yaml";
pub(crate) const MANIFEST: &str = "manifest.json";
pub(crate) const SUMMARY_MD: &str = "summary.md";

#[derive(Debug, Clone)]
pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// A new directory `<base>/<timestamp>-<name>`; a suffix keeps it unique.
    pub(crate) fn create(base: &Path, name: &str) -> Result<RunDir> {
        fs::create_dir_all(base).with_context(|| format!("failed to create {}", base.display()))?;
        let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
        let stem = format!("{stamp}-{}", crate::matrix::plan::slug(name));
        for n in 1.. {
            let path = if n == 1 {
                base.join(&stem)
            } else {
                base.join(format!("{stem}-{n}"))
            };
            match fs::create_dir(&path) {
                Ok(()) => return Ok(RunDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("failed to create {}", path.display()))
                }
            }
        }
        unreachable!("the loop only ends by returning")
    }

    /// An existing run directory (for `--resume` and `report`).
    pub(crate) fn open(path: &Path) -> Result<RunDir> {
        if !path.join(MATRIX_COPY).is_file() {
            return Err(crate::error::UsageError(format!(
                "{} is not an rmatrix run directory (no {MATRIX_COPY})",
                path.display()
            ))
            .into());
        }
        Ok(RunDir {
            path: path.to_path_buf(),
        })
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Per-deployment folder for the rendered config, server log and variables.
    pub(crate) fn deployment_dir(&self, slug: &str) -> Result<PathBuf> {
        let dir = self.path.join("servers").join(slug);
        fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
        Ok(dir)
    }

    pub(crate) fn append(&self, row: &ResultRow) -> Result<()> {
        self.record(row, &Status::new())
    }

    /// Append `row` to results.csv, its counter deltas (of an ok row) first to counters.csv
    /// (a kill between the two leaves counters without a row, which a resume drops). A
    /// results.csv an older rmatrix began (a resume) gets the row in its own columns, and
    /// in format 1 the counters in its `server_counters` column.
    pub(crate) fn record(&self, row: &ResultRow, counters: &Status) -> Result<()> {
        let path = self.file(RESULTS_CSV);
        let header = super::stored_csv::header(&path, crate::input::file::RESULTS)?;
        let counters = match row.is_ok() {
            true => counters.clone(),
            false => Status::new(),
        };
        let legacy = header
            .as_ref()
            .is_some_and(|h| h.iter().any(|c| c == super::legacy::SERVER_COUNTERS));
        if !legacy {
            let cell = row.cell();
            super::counters::CounterSink::new(self, &cell, row.iteration).write(&counters)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        match header {
            Some(h) if h != super::check::known_columns().iter().collect::<Vec<_>>() => {
                let projected = super::legacy::project(row, &counters, &h);
                write_once(file, &path, false, &[projected])
            }
            Some(_) => write_once(file, &path, false, std::slice::from_ref(row)),
            None => write_once(file, &path, true, std::slice::from_ref(row)),
        }
    }
}

impl RunDir {
    /// Every row of results.csv, in the order written (failed attempts included).
    pub(crate) fn rows(&self) -> Result<Vec<ResultRow>> {
        read_rows(&self.file(RESULTS_CSV))
    }

    /// One row per (cell, iteration): its `ok` row when it has one (a failed attempt that a
    /// `--resume` measured again is superseded), else its last failed attempt.
    pub(crate) fn current_rows(&self) -> Result<Vec<ResultRow>> {
        Ok(current(self.rows()?))
    }

    /// Make a run killed midway fit to resume: cut a torn last line off results.csv and
    /// its side files, and drop the samples and counters of iterations without an `ok` row (they are measured
    /// again, and their new samples must not join the old ones).
    pub(crate) fn repair(&self) -> Result<()> {
        let results = self.file(RESULTS_CSV);
        if cut_torn_line(&results, crate::input::file::RESULTS)? {
            eprintln!("{}: cut off a torn last row", results.display());
        }
        let samples = self.file(super::samples::SAMPLES_CSV);
        cut_torn_line(&samples, crate::input::file::SAMPLES)?;
        let ok: std::collections::HashSet<(crate::model::CellKey, u32)> = self
            .rows()?
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| (r.cell_key(), r.iteration))
            .collect();
        let keep = |key: &crate::model::CellKey, iteration| ok.contains(&(key.clone(), iteration));
        super::samples::retain(&samples, crate::input::file::SAMPLES, keep)?;
        let warmup = self.file(super::samples::WARMUP_CSV);
        cut_torn_line(&warmup, crate::input::file::SAMPLES)?;
        super::samples::retain(&warmup, crate::input::file::SAMPLES, keep)?;
        // operations.csv and counters.csv have the same key columns.
        let operations = self.file(super::operations::OPERATIONS_CSV);
        cut_torn_line(&operations, crate::input::file::OPERATIONS)?;
        super::samples::retain(&operations, crate::input::file::OPERATIONS, keep)?;
        let counters = self.file(super::counters::COUNTERS_CSV);
        cut_torn_line(&counters, crate::input::file::COUNTERS)?;
        super::samples::retain(&counters, crate::input::file::COUNTERS, keep)?;
        let seconds = self.file(super::server_seconds::SERVER_SECONDS_CSV);
        cut_torn_line(&seconds, crate::input::file::SERVER_SECONDS)?;
        super::samples::retain(&seconds, crate::input::file::SERVER_SECONDS, keep)
    }

    pub(crate) fn write_json(&self, name: &str, value: &serde_json::Value) -> Result<()> {
        replace_file(
            &self.file(name),
            (serde_json::to_string_pretty(value)? + "\n").as_bytes(),
        )
    }
}

/// The rows that stand for each (cell, iteration), at the position of its first row.
pub(crate) fn current(rows: Vec<ResultRow>) -> Vec<ResultRow> {
    use std::collections::hash_map::{Entry, HashMap};
    let mut slot: HashMap<(crate::model::CellKey, u32), usize> = HashMap::new();
    let mut out: Vec<ResultRow> = Vec::new();
    for r in rows {
        match slot.entry((r.cell_key(), r.iteration)) {
            Entry::Vacant(v) => {
                v.insert(out.len());
                out.push(r);
            }
            Entry::Occupied(o) => {
                let standing = &mut out[*o.get()];
                if !standing.is_ok() {
                    *standing = r;
                }
            }
        }
    }
    out
}

pub(crate) fn read_rows(path: &Path) -> Result<Vec<ResultRow>> {
    let Some(bytes) = super::stored_csv::bytes(path, crate::input::file::RESULTS)? else {
        return Ok(Vec::new());
    };
    Ok(super::stored_csv::deserialize(path, &bytes)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir::create(tmp.path(), "t").unwrap();
        let other = RunDir::create(tmp.path(), "t").unwrap();
        assert_ne!(dir.path, other.path, "never reuse a run directory");
        let mut row = ResultRow {
            server: "s".into(),
            status: crate::model::Status::Ok,
            qps: Some(12.5),
            ..Default::default()
        };
        dir.append(&row).unwrap();
        row.iteration = 2;
        row.qps = None;
        dir.append(&row).unwrap();
        let rows = dir.rows().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].qps, Some(12.5));
        assert_eq!(rows[1].qps, None);
        let text = fs::read_to_string(dir.file(RESULTS_CSV)).unwrap();
        assert_eq!(text.matches("server,config").count(), 1, "header once");
    }

    fn row(workload: &str, iteration: u32, ok: bool) -> ResultRow {
        let r = ResultRow {
            server: "s".into(),
            workload: workload.into(),
            iteration,
            status: crate::model::Status::Ok,
            qps: Some(1.0),
            ..Default::default()
        };
        if ok {
            r
        } else {
            r.failed("gone")
        }
    }

    #[test]
    fn a_later_ok_row_supersedes_failed_attempts() {
        let rows = vec![
            row("a", 1, false),
            row("b", 1, true),
            row("a", 1, false),
            row("a", 2, false),
            row("a", 1, true),
            row("a", 2, false),
        ];
        let got: Vec<(String, u32, bool)> = current(rows)
            .into_iter()
            .map(|r| (r.workload.clone(), r.iteration, r.is_ok()))
            .collect();
        assert_eq!(
            got,
            [
                ("a".into(), 1, true),
                ("b".into(), 1, true),
                ("a".into(), 2, false)
            ],
            "one row per iteration, at its first position"
        );
    }

    #[test]
    fn counters_go_to_their_file_or_to_a_format_1_column() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: tmp.path().to_path_buf(),
        };
        let moved: Status = [("Com_insert".into(), 9), ("Questions".into(), 11)].into();
        dir.record(&row("a", 1, true), &moved).unwrap();
        dir.record(&row("a", 2, false), &moved).unwrap();
        let header = fs::read_to_string(dir.file(RESULTS_CSV)).unwrap();
        assert!(!header.contains("server_counters"), "{header}");
        let counters = super::super::counters::COUNTERS_CSV;
        let lines = fs::read_to_string(dir.file(counters)).unwrap();
        assert_eq!(
            lines.lines().count(),
            3,
            "a failed row has no counters: {lines}"
        );
        // A run that was killed before its row: the resume drops its counters.
        let killed = ResultRow {
            iteration: 3,
            ..row("a", 3, true)
        };
        super::super::counters::CounterSink::new(&dir, &killed.cell(), 3)
            .write(&moved)
            .unwrap();
        dir.repair().unwrap();
        assert_eq!(fs::read_to_string(dir.file(counters)).unwrap(), lines);

        // Format 1, resumed: the row in the file's own columns, the counters in it.
        let old = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: old.path().to_path_buf(),
        };
        let head = "server,config,engine,workload,kind,concurrency,iteration,status,error,qps,\
                    server_counters,thread_events_avg\n";
        fs::write(dir.file(RESULTS_CSV), head).unwrap();
        dir.record(&row("a", 1, true), &moved).unwrap();
        let text = fs::read_to_string(dir.file(RESULTS_CSV)).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some(r#"s,,,a,,0,1,ok,,1.0,"{""Com_insert"":9,""Questions"":11}","#)
        );
        assert!(!dir.file(counters).exists());
        let rows = dir.rows().unwrap();
        assert_eq!(
            super::super::counters::of_rows(&dir, &rows).unwrap(),
            [moved]
        );
    }

    #[test]
    fn a_torn_last_row_is_left_out_and_cut_on_repair() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir {
            path: tmp.path().to_path_buf(),
        };
        dir.append(&row("a", 1, true)).unwrap();
        dir.append(&row("a", 2, true)).unwrap();
        let whole = fs::read_to_string(dir.file(RESULTS_CSV)).unwrap();
        fs::write(dir.file(RESULTS_CSV), whole.clone() + "s,,,a,,0,3,ok,,12").unwrap();
        assert_eq!(dir.rows().unwrap().len(), 2, "the torn row is left out");
        let samples = dir.file(super::super::samples::SAMPLES_CSV);
        let line = |i: u32| format!("s,,,a,0,{i},1,1,1.0,1.0,0.0,0.0,0.0,0.1,0.0,0.0\n");
        fs::write(
            &samples,
            "server,config,engine,workload,concurrency,iteration,second,threads,tps,qps,\
             reads_ps,writes_ps,others_ps,lat_p95_ms,errors_ps,reconnects_ps\n"
                .to_string()
                + &line(1)
                + &line(2)
                + &line(3)
                + "s,,,a,0,4,1",
        )
        .unwrap();
        dir.repair().unwrap();
        assert_eq!(fs::read_to_string(dir.file(RESULTS_CSV)).unwrap(), whole);
        let kept = fs::read_to_string(&samples).unwrap();
        assert!(kept.ends_with(&(line(1) + &line(2))), "{kept}");
        assert_eq!(kept.lines().count(), 3, "iteration 3 had no ok row: {kept}");
    }
}
