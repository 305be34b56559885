//! `server_seconds.csv`: the server's counters once a second (`measure::server_seconds`), one
//! line per cell iteration, phase, second and counter that moved (long format, keyed like
//! samples.csv), appended as each iteration finishes. A count's line holds its delta over
//! the second, a level's (`Threads_running`) its reading at the second's end; the seconds of
//! a phase add up to its counter deltas (counters.csv).

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::check::Refused;
use crate::matrix::Cell;
use crate::measure::server_seconds::{Kind, Phase, ServerSecond};
use crate::model::CellKey;

pub(crate) const SERVER_SECONDS_CSV: &str = "server_seconds.csv";

/// One line of server_seconds.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Line {
    server: String,
    config: String,
    engine: String,
    workload: String,
    concurrency: u32,
    rate: Option<u32>,
    iteration: u32,
    phase: Phase,
    second: u32,
    span_s: f64,
    counter: String,
    kind: Kind,
    value: u64,
}

/// Where an iteration's server seconds go.
pub(crate) struct ServerSecondSink {
    path: PathBuf,
    cell: Cell,
    iteration: u32,
}

impl ServerSecondSink {
    pub(crate) fn new(dir: &super::RunDir, cell: &Cell, iteration: u32) -> ServerSecondSink {
        ServerSecondSink {
            path: dir.file(SERVER_SECONDS_CSV),
            cell: cell.clone(),
            iteration,
        }
    }

    /// Append every line of the iteration in one write (a kill leaves all or none); with
    /// none, no file.
    pub(crate) fn write(&self, seconds: &[ServerSecond]) -> Result<()> {
        let c = &self.cell;
        let lines: Vec<Line> = seconds
            .iter()
            .flat_map(|s| {
                s.values.iter().map(move |(counter, kind, value)| Line {
                    server: c.server.clone(),
                    config: c.config.clone(),
                    engine: c.engine.clone().unwrap_or_default(),
                    workload: c.workload.clone(),
                    concurrency: c.concurrency,
                    rate: c.rate,
                    iteration: self.iteration,
                    phase: s.phase,
                    second: s.second,
                    span_s: s.span_s,
                    counter: counter.clone(),
                    kind: *kind,
                    value: *value,
                })
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

/// A run's server seconds, by (cell key, iteration), each phase's seconds in order.
pub(crate) type ServerSeconds = HashMap<(CellKey, u32), Vec<ServerSecond>>;

/// The lines of a run's server_seconds.csv (none when there is no file), checked: names as
/// counters.csv checks them, each value and span within its plausible range, one line per
/// (cell, iteration, phase, second, counter). A refusal names the file and line.
pub(crate) fn read(path: &Path) -> Result<ServerSeconds, Refused> {
    let mut out = ServerSeconds::new();
    let Some(bytes) = super::stored_csv::bytes(path, crate::input::file::SERVER_SECONDS)? else {
        return Ok(out);
    };
    for (line, l) in super::stored_csv::deserialize::<Line>(path, &bytes)? {
        let bad = |message: String| Refused::BadRow {
            path: path.into(),
            line,
            message,
        };
        check(&l).map_err(bad)?;
        let key = CellKey::of_columns(
            &l.server,
            &l.config,
            &l.engine,
            &l.workload,
            l.concurrency,
            l.rate,
        );
        let seconds = out.entry((key, l.iteration)).or_default();
        let at = seconds
            .iter()
            .position(|s| s.phase == l.phase && s.second == l.second);
        let s = match at {
            Some(i) => &mut seconds[i],
            None => {
                seconds.push(ServerSecond {
                    phase: l.phase,
                    second: l.second,
                    span_s: l.span_s,
                    values: Vec::new(),
                });
                seconds.last_mut().expect("just pushed")
            }
        };
        if s.values.iter().any(|(k, _, _)| *k == l.counter) {
            return Err(bad(format!(
                "a second line for counter `{}` in second {} of iteration {}",
                l.counter, l.second, l.iteration
            )));
        }
        s.values.push((l.counter, l.kind, l.value));
    }
    for seconds in out.values_mut() {
        seconds.sort_by_key(|s| (s.phase == Phase::Measured, s.second));
    }
    Ok(out)
}

fn check(l: &Line) -> Result<(), String> {
    use crate::input::untrusted;
    untrusted::name("server", &l.server)?;
    untrusted::name("config", &l.config)?;
    untrusted::name("workload", &l.workload)?;
    if !l.engine.is_empty() {
        untrusted::sql_identifier("engine", &l.engine)?;
    }
    crate::input::untrusted::counter_name(&l.counter)?;
    crate::model::plausible::check("delta", &l.value.to_string())
        .map_err(|e| format!("value: {e}"))?;
    if !(l.span_s > 0.0 && l.span_s <= 3600.0) {
        return Err(format!(
            "span_s {} must lie in (0, 3600]: an interval between two reads",
            l.span_s
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> Cell {
        Cell {
            server: "mariadb-11.8".into(),
            config: "binlog-on".into(),
            engine: Some("InnoDB".into()),
            workload: "write".into(),
            concurrency: 4,
            rate: None,
        }
    }

    fn second(phase: Phase, n: u32, values: &[(&str, u64)]) -> ServerSecond {
        let kind = |k: &str| match k.starts_with("Threads") {
            true => Kind::Level,
            false => Kind::Count,
        };
        ServerSecond {
            phase,
            second: n,
            span_s: 1.0,
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), kind(k), *v))
                .collect(),
        }
    }

    #[test]
    fn writes_and_reads_back_each_phase_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = super::super::RunDir {
            path: tmp.path().to_path_buf(),
        };
        let got = [
            second(Phase::Warmup, 1, &[("Com_insert", 10)]),
            second(
                Phase::Measured,
                1,
                &[("Com_insert", 20), ("Threads_running", 4)],
            ),
            second(Phase::Measured, 2, &[("Com_insert", 25)]),
            second(Phase::Measured, 3, &[]),
        ];
        ServerSecondSink::new(&dir, &cell(), 1).write(&got).unwrap();
        ServerSecondSink::new(&dir, &cell(), 2).write(&[]).unwrap();
        let text = std::fs::read_to_string(dir.file(SERVER_SECONDS_CSV)).unwrap();
        assert!(text.starts_with(
            "server,config,engine,workload,concurrency,rate,iteration,phase,second,span_s,counter,kind,value\n\
             mariadb-11.8,binlog-on,InnoDB,write,4,,1,warmup,1,1.0,Com_insert,count,10\n"
        ), "{text}");
        let back = read(&dir.file(SERVER_SECONDS_CSV)).unwrap();
        let s = &back[&(cell().key(), 1)];
        assert_eq!(s, &got[..3], "a second with nothing that moved has no line");
        assert!(!back.contains_key(&(cell().key(), 2)));
    }

    #[test]
    fn refuses_what_no_server_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(SERVER_SECONDS_CSV);
        let head = "server,config,engine,workload,concurrency,rate,iteration,phase,second,span_s,counter,kind,value\n";
        for (line, says) in [
            (
                "s,c,,w,1,,1,measured,1,1.0,Com_x,count,1\ns,c,,w,1,,1,measured,1,1.0,Com_x,count,2\n",
                "a second line",
            ),
            ("s,c,,w,1,,1,measured,1,0,Com_x,count,1\n", "span_s 0 must lie"),
            ("s,c,,w,1,,1,measured,1,1.0,Com x,count,1\n", "counter name"),
            ("s,c,,w,1,,1,later,1,1.0,Com_x,count,1\n", "later"),
            ("s,c,,w,1,,1,measured,1,1.0,Com_x,rate,1\n", "rate"),
        ] {
            std::fs::write(&path, format!("{head}{line}")).unwrap();
            let e = read(&path).unwrap_err().to_string();
            assert!(e.contains(says), "{line}: {e}");
        }
    }
}
