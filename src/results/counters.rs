//! `counters.csv`: the server's counter deltas over each measured iteration, one line per
//! cell iteration and counter that moved (long format, keyed like samples.csv), appended as
//! each iteration finishes. Kept out of results.csv (format 2) so that every reader of the
//! rows does not parse ~14 KB of counters per row; format 1's `server_counters` column is
//! read by `legacy`.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::check::Refused;
use crate::matrix::Cell;
use crate::measure::counters::Status;
use crate::model::{CellKey, ResultRow};

pub(crate) const COUNTERS_CSV: &str = "counters.csv";

/// One line of counters.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CounterLine {
    server: String,
    config: String,
    engine: String,
    workload: String,
    concurrency: u32,
    rate: Option<u32>,
    iteration: u32,
    counter: String,
    delta: u64,
}

/// Where an ok iteration's counter deltas go.
#[derive(Debug, Clone)]
pub(crate) struct CounterSink {
    path: PathBuf,
    cell: Cell,
    iteration: u32,
}

impl CounterSink {
    pub(crate) fn new(dir: &super::RunDir, cell: &Cell, iteration: u32) -> CounterSink {
        CounterSink {
            path: dir.file(COUNTERS_CSV),
            cell: cell.clone(),
            iteration,
        }
    }

    /// Append the deltas that moved in one write (a kill leaves all of them or none); a
    /// counter at 0 has no line, and nothing moved, no file.
    pub(crate) fn write(&self, counters: &Status) -> Result<()> {
        let c = &self.cell;
        let lines: Vec<CounterLine> = counters
            .iter()
            .filter(|(_, delta)| **delta > 0)
            .map(|(counter, delta)| CounterLine {
                server: c.server.clone(),
                config: c.config.clone(),
                engine: c.engine.clone().unwrap_or_default(),
                workload: c.workload.clone(),
                concurrency: c.concurrency,
                rate: c.rate,
                iteration: self.iteration,
                counter: counter.clone(),
                delta: *delta,
            })
            .collect();
        if lines.is_empty() {
            return Ok(());
        }
        let fresh = !self.path.exists();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("failed to open {}", self.path.display()))?;
        super::files::write_once(file, &self.path, fresh, &lines)
    }
}

/// The counter deltas of a run, by (cell key, iteration).
pub(crate) type Counters = HashMap<(CellKey, u32), Status>;

/// The lines of a run's counters.csv (none when there is no file), checked: cell names as
/// a matrix names them, counter names as a server names them, each delta a count within
/// its plausible range, one line per (cell, iteration, counter). A refusal names the file
/// and line.
pub(crate) fn read(path: &Path) -> Result<Counters, Refused> {
    let mut out = Counters::new();
    let Some(bytes) = super::stored_csv::bytes(path, crate::input::file::COUNTERS)? else {
        return Ok(out);
    };
    for (line, l) in super::stored_csv::deserialize::<CounterLine>(path, &bytes)? {
        let bad = |message: String| Refused::BadRow {
            path: path.into(),
            line,
            message,
        };
        check_names(&l).map_err(bad)?;
        let key = CellKey::of_columns(
            &l.server,
            &l.config,
            &l.engine,
            &l.workload,
            l.concurrency,
            l.rate,
        );
        let iteration = l.iteration;
        let of = out.entry((key, iteration)).or_default();
        if of.insert(l.counter.clone(), l.delta).is_some() {
            return Err(bad(format!(
                "a second line for counter `{}` of iteration {iteration}; an iteration has \
                 one delta per counter",
                l.counter
            )));
        }
    }
    Ok(out)
}

fn check_names(l: &CounterLine) -> Result<(), String> {
    use crate::input::untrusted::{self, counter_name};
    untrusted::name("server", &l.server)?;
    untrusted::name("config", &l.config)?;
    untrusted::name("workload", &l.workload)?;
    if !l.engine.is_empty() {
        untrusted::sql_identifier("engine", &l.engine)?;
    }
    counter_name(&l.counter)
}

/// Each row's counter deltas, in the order of `rows` (the run's results.csv, as
/// `RunDir::rows` reads it): from counters.csv, or from format 1's column. Only an ok row
/// has counters in format 2.
pub(crate) fn of_rows(dir: &super::RunDir, rows: &[ResultRow]) -> Result<Vec<Status>> {
    let results = dir.file(super::rundir::RESULTS_CSV);
    if super::legacy::is_legacy(&results)? {
        return Ok(super::legacy::counters_of_rows(&results)?);
    }
    let mut counters = read(&dir.file(COUNTERS_CSV))?;
    Ok(rows
        .iter()
        .map(|r| match r.is_ok() {
            true => counters
                .remove(&(r.cell_key(), r.iteration))
                .unwrap_or_default(),
            false => Status::new(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(rate: Option<u32>) -> Cell {
        Cell {
            server: "mariadb-11.8".into(),
            config: "binlog-on".into(),
            engine: Some("InnoDB".into()),
            workload: "write".into(),
            concurrency: 4,
            rate,
        }
    }

    fn status(pairs: &[(&str, u64)]) -> Status {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn writes_what_moved_and_reads_it_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = super::super::RunDir {
            path: tmp.path().to_path_buf(),
        };
        let one = status(&[
            ("Com_insert", 2000),
            ("Questions", 2003),
            ("Aborted_clients", 0),
        ]);
        CounterSink::new(&dir, &cell(None), 1).write(&one).unwrap();
        CounterSink::new(&dir, &cell(None), 2)
            .write(&status(&[("Com_insert", 0)]))
            .unwrap();
        let open = status(&[("cmdstat_client|list", 1), ("cmdstat_set.usec", 7)]);
        CounterSink::new(&dir, &cell(Some(500)), 1)
            .write(&open)
            .unwrap();
        let text = std::fs::read_to_string(dir.file(COUNTERS_CSV)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "server,config,engine,workload,concurrency,rate,iteration,counter,delta",
                "mariadb-11.8,binlog-on,InnoDB,write,4,,1,Com_insert,2000",
                "mariadb-11.8,binlog-on,InnoDB,write,4,,1,Questions,2003",
                "mariadb-11.8,binlog-on,InnoDB,write,4,500,1,cmdstat_client|list,1",
                "mariadb-11.8,binlog-on,InnoDB,write,4,500,1,cmdstat_set.usec,7",
            ],
            "one header, no line for a counter at 0, none for an iteration where nothing moved"
        );
        let back = read(&dir.file(COUNTERS_CSV)).unwrap();
        let mut moved = one.clone();
        moved.remove("Aborted_clients");
        assert_eq!(back[&(cell(None).key(), 1)], moved);
        assert_eq!(back[&(cell(Some(500)).key(), 1)], open);
        assert_eq!(back.len(), 2);
        let rows: Vec<ResultRow> = [(None, 1, true), (None, 1, false), (None, 2, true)]
            .into_iter()
            .map(|(rate, i, ok)| {
                let r = ResultRow::for_cell(&cell(rate), "slap", i);
                let mut r = r.failed("x");
                if ok {
                    r.status = crate::model::Status::Ok;
                }
                r
            })
            .collect();
        let per_row = of_rows(&dir, &rows).unwrap();
        assert_eq!(per_row, [moved, Status::new(), Status::new()]);
    }

    #[test]
    fn damaged_lines_are_refused_with_their_line() {
        const HEAD: &str =
            "server,config,engine,workload,concurrency,rate,iteration,counter,delta\n";
        let cases = [
            (
                "s,c,,w,1,,1,Questions,-3\n",
                "counters.csv:2: delta is -3; a measured value",
            ),
            (
                "s,c,,w,1,,1,Questions,1e300\n",
                "counters.csv:2: delta is 1e300; no measurement",
            ),
            (
                "s,c,,w,1,,1,Questions,many\n",
                "counters.csv:2: column delta: invalid digit",
            ),
            (
                "s,c,,w,1,,1,Ques\u{1b}[2J,1\n",
                "counters.csv:2: counter name `Ques\\u{1b}[2J`",
            ),
            (
                "s,c,,w,1,,1,,1\n",
                "counters.csv:2: counter name `` must be",
            ),
            (
                "<b>,c,,w,1,,1,Questions,1\n",
                "counters.csv:2: server name `<b>`",
            ),
            (
                "s,c,,w,1,,1,Q,1\ns,c,,w,1,,1,Q,2\n",
                "counters.csv:3: a second line for counter `Q`",
            ),
            (
                "s,c,,w,1,,1\n",
                "counters.csv:2: the row has 7 fields, the header 9",
            ),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(COUNTERS_CSV);
        for (body, want) in cases {
            std::fs::write(&path, format!("{HEAD}{body}")).unwrap();
            let e = read(&path).unwrap_err().to_string();
            assert!(e.contains(want), "{body}: {e}");
        }
        std::fs::write(&path, format!("{HEAD}s,c,,w,1,,1,Q,1\ns,c,,w,1,,2,Q")).unwrap();
        assert_eq!(
            read(&path).unwrap().len(),
            1,
            "a torn last line is left out"
        );
    }
}
