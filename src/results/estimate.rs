//! How long a plan will take. Learned from stored runs of the same matrix where there are
//! some (how long each server took from its start to its first iteration, each cell's
//! iterations, what came between and after the deployments), assumed for what they lack,
//! and said which.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::input::Length;
use crate::matrix::model::Matrix;
use crate::matrix::plan::{Plan, ASSUMED_PREPARE_ROWS_PER_S, ASSUMED_RESTORE_ROWS_PER_S};
use crate::model::cell::{Cell, CellKey};
use crate::model::ResultRow;
use crate::results::manifest::Manifest;
use crate::results::rundir::{RunDir, MANIFEST, MATRIX_COPY};

/// Assumed rate for count-based lengths, when no stored run says better.
pub(crate) const ASSUMED_QPS: f64 = 2000.0;
/// Assumed server start + verification time per deployment, when no stored run says better.
pub(crate) const ASSUMED_START: Duration = Duration::from_secs(10);

/// Where a plan's estimate looks for stored runs when it is told none: this machine's runs
/// (`run`'s default folder), then the shipped examples.
pub(crate) fn default_sources() -> Vec<PathBuf> {
    ["reports/runs", "reports/examples"]
        .iter()
        .map(PathBuf::from)
        .collect()
}

/// One stored iteration: its wall time (from its start to the next one's, or to its
/// deployment's end) and its measured phase.
#[derive(Debug, Clone, Copy)]
struct Iteration {
    wall: f64,
    measured: f64,
    queries: Option<u64>,
}

/// What stored runs of a matrix say about its timings.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    /// The run directories learned from.
    pub(crate) runs: Vec<PathBuf>,
    /// (server, config): seconds from the deployment's start to its first iteration.
    starts: HashMap<(String, String), Vec<f64>>,
    iterations: HashMap<CellKey, Vec<Iteration>>,
    /// Per deployment, what a run spent outside them after the first began (teardown,
    /// cooldowns, kept data sets' prepares).
    between: Vec<f64>,
}

/// The stored runs of the matrix called `name` among `paths` (run directories, or folders of
/// them such as reports/runs); a folder that is missing or a run that cannot be read adds
/// nothing.
pub(crate) fn learn(paths: &[PathBuf], name: &str) -> Learned {
    let mut learned = Learned::default();
    for dir in run_dirs(paths) {
        if stored_name(&dir).as_deref() == Some(name) {
            if let Ok(dir) = RunDir::open(&dir) {
                learned.add(&dir);
            }
        }
    }
    learned
}

fn run_dirs(paths: &[PathBuf]) -> Vec<PathBuf> {
    let is_run = |p: &Path| p.join(MANIFEST).is_file();
    let mut out = Vec::new();
    for p in paths {
        if is_run(p) {
            out.push(p.clone());
        } else if let Ok(entries) = std::fs::read_dir(p) {
            let mut dirs: Vec<PathBuf> = (entries.filter_map(|e| e.ok().map(|e| e.path())))
                .filter(|d| is_run(d))
                .collect();
            dirs.sort();
            out.extend(dirs);
        }
    }
    out
}

/// The `name:` of a run's matrix copy (its file stem where it has none, as a run names it).
/// A file refused by its cap or kind is said, and the run skipped.
fn stored_name(dir: &Path) -> Option<String> {
    use crate::input::file;
    #[derive(serde::Deserialize)]
    struct Named {
        #[serde(default)]
        name: Option<String>,
    }
    let read = |name: &str, cap| match file::read_text(&dir.join(name), cap) {
        Ok(text) => Some(text),
        Err(e) => {
            if !e.is_missing() {
                eprintln!("warning: a stored run left out of the estimate: {e}");
            }
            None
        }
    };
    let named: Named = serde_saphyr::from_str(&read(MATRIX_COPY, file::MATRIX_COPY)?).ok()?;
    named.name.or_else(|| {
        let man: Manifest = serde_json::from_str(&read(MANIFEST, file::MANIFEST)?).ok()?;
        Path::new(&man.matrix_file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    })
}

fn time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / 1000.0
}

impl Learned {
    /// One run directory.
    fn add(&mut self, dir: &RunDir) {
        let man = (crate::results::check::read_manifest(&dir.file(MANIFEST)))
            .ok()
            .flatten();
        if let (Some(man), Ok(rows)) = (man, dir.rows()) {
            self.add_run(&dir.path, &man, &rows);
        }
    }

    /// One run, wherever it is stored (a folder, a results store): its manifest and rows,
    /// each deployment's rows in the order they started, within its window.
    pub(crate) fn add_run(&mut self, path: &Path, man: &serde_json::Value, rows: &[ResultRow]) {
        let Ok(man) = serde_json::from_value::<Manifest>(man.clone()) else {
            return;
        };
        let Some(run_end) = man.finished_at.as_deref().and_then(time) else {
            return;
        };
        let mut inside = 0.0;
        let mut first_start = None::<DateTime<Utc>>;
        let mut deployments = 0;
        for d in &man.deployments {
            let (Some(from), Some(to)) =
                (time(&d.started_at), d.finished_at.as_deref().and_then(time))
            else {
                continue;
            };
            let mut mine: Vec<_> = (rows.iter())
                .filter(|r| r.server == d.server && r.config == d.config)
                .filter_map(|r| Some((time(&r.started_at)?, r)))
                .filter(|(t, _)| *t >= from && *t <= to)
                .collect();
            mine.sort_by_key(|(t, _)| *t);
            let Some((first, _)) = mine.first() else {
                continue;
            };
            (self
                .starts
                .entry((d.server.clone(), d.config.clone()))
                .or_default())
            .push(seconds(from, *first));
            for (i, (t, row)) in mine.iter().enumerate() {
                let next = mine.get(i + 1).map_or(to, |(n, _)| *n);
                (self.iterations.entry(row.cell_key()).or_default()).push(Iteration {
                    wall: seconds(*t, next),
                    measured: row.seconds.unwrap_or(0.0),
                    queries: row.queries,
                });
            }
            inside += seconds(from, to);
            first_start = Some(first_start.map_or(from, |f| f.min(from)));
            deployments += 1;
        }
        if let Some(first) = first_start {
            // What came before the first deployment (image builds) happens once per machine.
            let outside = (seconds(first, run_end) - inside).max(0.0);
            self.between.push(outside / f64::from(deployments.max(1)));
        }
        self.runs.push(path.to_path_buf());
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    })
}

/// A plan's estimate, and how much of it was learned.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Estimate {
    pub(crate) seconds: f64,
    /// Seconds per iteration of each planned cell, for the run's ETA.
    #[serde(skip)]
    pub(crate) per_iteration: HashMap<CellKey, f64>,
    pub(crate) cells: usize,
    pub(crate) cells_learned: usize,
    pub(crate) server_starts: u64,
    pub(crate) starts_learned: u64,
    pub(crate) learned_from: Vec<String>,
    /// What was assumed for the rest.
    pub(crate) assumed: String,
}

impl Estimate {
    /// The per-iteration estimate of `cell` (a cell the plan did not have: the mean).
    pub(crate) fn of_cell(&self, cell: &Cell) -> f64 {
        match self.per_iteration.get(&cell.key()) {
            Some(s) => *s,
            None if self.per_iteration.is_empty() => 0.0,
            None => self.per_iteration.values().sum::<f64>() / self.per_iteration.len() as f64,
        }
    }

    /// `~4m05s`.
    pub(crate) fn shown(seconds: f64) -> String {
        let s = seconds.max(0.0).round() as u64;
        match s >= 3600 {
            true => format!("~{}h{:02}m", s / 3600, (s % 3600) / 60),
            false => format!("~{}m{:02}s", s / 60, s % 60),
        }
    }
}

/// The plan's estimate: each deployment's start and each cell's iterations as `learned`
/// has them, the rest assumed.
pub(crate) fn estimate(m: &Matrix, plan: &Plan, learned: &Learned) -> Estimate {
    let length_s = |l: Length| match l {
        Length::Queries(n) => n as f64 / ASSUMED_QPS,
        Length::Time(d) => d.as_secs_f64(),
    };
    let assumed_iteration = m.length.map_or(0.0, length_s) + m.warmup.map_or(0.0, length_s) + 1.0;
    let starts_per = match m.repeat.restart {
        true => u64::from(m.iterations),
        false => 1,
    };
    // An unlearned server starts as this matrix's other servers did, else as assumed.
    let typical_start = median(learned.starts.values().flatten().copied().collect());
    let between = median(learned.between.clone()).unwrap_or(0.0);
    let mut e = Estimate {
        learned_from: (learned.runs.iter())
            .map(|p| p.display().to_string())
            .collect(),
        ..Estimate::default()
    };
    for d in &plan.deployments {
        let learned_start = median(
            (learned.starts.get(&(d.server.clone(), d.config.clone())))
                .cloned()
                .unwrap_or_default(),
        );
        e.server_starts += starts_per;
        e.seconds += match learned_start {
            Some(s) => {
                e.starts_learned += starts_per;
                s + between
            }
            None => {
                typical_start.unwrap_or(ASSUMED_START.as_secs_f64()) * starts_per as f64 + between
            }
        };
        for c in &d.cells {
            let per = match learned.iterations.get(&c.key()) {
                Some(its) => {
                    e.cells_learned += 1;
                    learned_iteration(its, m.length)
                }
                None => assumed_iteration,
            };
            e.cells += 1;
            e.per_iteration.insert(c.key(), per);
            e.seconds += per * f64::from(m.iterations);
        }
    }
    let (data_s, data_starts, data_line) = data_estimate(m, plan);
    if learned.runs.is_empty() {
        e.seconds += data_s + ASSUMED_START.as_secs_f64() * data_starts as f64;
        e.server_starts += data_starts;
    }
    e.assumed = assumptions(m, &e, typical_start.is_some(), data_line);
    e
}

/// A learned cell's iteration at the planned length: what it spent outside its measured
/// phase, plus the phase at this plan's length (a count at the rate it ran).
fn learned_iteration(its: &[Iteration], length: Option<Length>) -> f64 {
    let around = median(its.iter().map(|i| (i.wall - i.measured).max(0.0)).collect());
    let measured = median(its.iter().map(|i| i.measured).collect()).unwrap_or(0.0);
    let phase = match length {
        Some(Length::Time(d)) => d.as_secs_f64(),
        Some(Length::Queries(n)) => {
            let rate = median(
                (its.iter())
                    .filter_map(|i| Some(i.queries? as f64 / i.measured).filter(|r| r.is_finite()))
                    .collect(),
            );
            rate.filter(|r| *r > 0.0).map_or(measured, |r| n as f64 / r)
        }
        None => measured,
    };
    around.unwrap_or(0.0) + phase
}

/// What the estimate assumed, for the plan's line; empty when it assumed nothing.
fn assumptions(m: &Matrix, e: &Estimate, typical_start: bool, data_line: String) -> String {
    let mut parts = Vec::new();
    if e.starts_learned < e.server_starts {
        parts.push(match typical_start {
            true => "a server start as this matrix's others took".to_string(),
            false => format!("{}s per server start", ASSUMED_START.as_secs()),
        });
    }
    if e.cells_learned < e.cells {
        parts.push(match m.length {
            Some(Length::Queries(_)) => {
                format!("~{ASSUMED_QPS:.0} queries/s for count-based lengths")
            }
            _ => "each iteration as long as its length and warmup, plus 1 s".into(),
        });
    }
    if e.learned_from.is_empty() && !data_line.is_empty() {
        parts.push(data_line);
    }
    parts.join("; ")
}

/// What loading the tables adds to a plan: prepares (each on a server start of its own when
/// the matrix keeps data sets) and restores, in seconds, and the words that say so.
fn data_estimate(m: &Matrix, plan: &Plan) -> (f64, u64, String) {
    let starts_per = match m.repeat.restart {
        true => u64::from(m.iterations),
        false => 1,
    };
    let reuse = m.datasets.is_some_and(|d| d.reuse);
    let (mut prepared, mut restored, mut extra_starts) = (0u64, 0u64, 0u64);
    let mut sets = std::collections::BTreeSet::new();
    for d in &plan.deployments {
        let Ok(layouts) = d.layouts(m) else { continue };
        let rows: u64 = layouts.iter().map(|l| l.rows).sum();
        let family = m.servers[&d.server].kind().family();
        // The server's name stands for its image, which only the run knows.
        let set = crate::servers::dataset::DataSet::of(
            family,
            &d.server,
            &layouts,
            &m.configs[&d.config],
        );
        match (reuse && family.datadir().is_some(), sets.insert(set.key)) {
            (true, true) => {
                prepared += rows;
                extra_starts += 1;
                restored += rows * starts_per;
            }
            (true, false) => restored += rows * starts_per,
            (false, _) => prepared += rows * starts_per,
        }
    }
    if prepared + restored == 0 {
        return (0.0, 0, String::new());
    }
    let seconds =
        prepared as f64 / ASSUMED_PREPARE_ROWS_PER_S + restored as f64 / ASSUMED_RESTORE_ROWS_PER_S;
    let line = match reuse {
        true => format!(
            "tables: {prepared} rows prepared into {} kept data set(s), {restored} rows restored \
             at ~{ASSUMED_PREPARE_ROWS_PER_S:.0} rows/s to prepare, \
             ~{ASSUMED_RESTORE_ROWS_PER_S:.0} rows/s to copy and check",
            sets.len()
        ),
        false => {
            format!("tables: {prepared} rows prepared at ~{ASSUMED_PREPARE_ROWS_PER_S:.0} rows/s")
        }
    };
    (seconds, extra_starts, line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::manifest::{DeploymentFacts, DeploymentStatus};
    use crate::results::ResultRow;

    const MATRIX: &str = "name: t\nservers: {a: {image: example/a:1}}\n\
                          configs: {x: {}, y: {}}\nengines: [InnoDB]\n\
                          workloads: {w: {slap: {}}}\niterations: 2\nlength: 10s\n";

    fn at(s: i64) -> String {
        let t0 = DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z").unwrap();
        (t0 + chrono::Duration::seconds(s))
            .to_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    /// A stored run of MATRIX: config x from 0 s to 60 s (iterations at 20 s and 40 s),
    /// y from 60 s to 100 s (at 70 s and 85 s), each measuring 10 s; the run ends at 105 s.
    fn stored_run(base: &Path) -> PathBuf {
        let loaded = crate::matrix::load_str(MATRIX, Path::new("t.yaml")).unwrap();
        let dir = RunDir::create(base, "t").unwrap();
        std::fs::write(dir.file(MATRIX_COPY), MATRIX).unwrap();
        let plan = crate::matrix::expand(&loaded.matrix, &[]);
        let deployment = |config: &str, from, to| DeploymentFacts {
            server: "a".into(),
            config: config.into(),
            status: DeploymentStatus::Ok,
            started_at: at(from),
            finished_at: Some(at(to)),
            ..DeploymentFacts::default()
        };
        let man = Manifest {
            format_version: crate::model::row::FORMAT_VERSION,
            started_at: at(-30),
            finished_at: Some(at(105)),
            deployments: vec![deployment("x", 0, 60), deployment("y", 60, 100)],
            ..Manifest::default()
        };
        std::fs::write(dir.file(MANIFEST), serde_json::to_string(&man).unwrap()).unwrap();
        for (cell, starts) in plan.cells().zip([[20, 40], [70, 85]]) {
            for (i, s) in starts.into_iter().enumerate() {
                let mut row = ResultRow::for_cell(cell, "slap", i as u32 + 1);
                row.started_at = at(s);
                row.seconds = Some(10.0);
                dir.append(&row).unwrap();
            }
        }
        dir.path
    }

    fn plan_of(text: &str) -> (Matrix, Plan) {
        let loaded = crate::matrix::load_str(text, Path::new("t.yaml")).unwrap();
        let plan = crate::matrix::expand(&loaded.matrix, &[]);
        (loaded.matrix, plan)
    }

    /// Learned from the run itself, the estimate is the run's time from its first server
    /// start: each start, each iteration, and what came between the deployments.
    #[test]
    fn a_stored_run_of_the_matrix_estimates_it_as_it_ran() {
        let tmp = tempfile::tempdir().unwrap();
        let run = stored_run(tmp.path());
        let learned = learn(&[tmp.path().to_path_buf()], "t");
        assert_eq!(learned.runs, [run]);
        assert!(learn(&[tmp.path().to_path_buf()], "other").runs.is_empty());
        let (m, plan) = plan_of(MATRIX);
        let e = estimate(&m, &plan, &learned);
        assert!((e.seconds - 105.0).abs() < 1e-9, "{e:?}");
        assert_eq!(
            (e.cells_learned, e.cells, e.starts_learned, e.server_starts),
            (2, 2, 2, 2)
        );
        assert_eq!(e.assumed, "");
        // At twice the length, each of the 4 iterations measures 10 s more.
        let (m, plan) = plan_of(&MATRIX.replace("length: 10s", "length: 20s"));
        assert!((estimate(&m, &plan, &learned).seconds - 145.0).abs() < 1e-9);
    }

    /// A config the stored run lacks starts as its others did (the median, 15 s) and its
    /// iterations are assumed (length + 1 s); said so.
    #[test]
    fn what_the_stored_runs_lack_is_assumed_and_said() {
        let tmp = tempfile::tempdir().unwrap();
        stored_run(tmp.path());
        let learned = learn(&[tmp.path().to_path_buf()], "t");
        let (m, plan) = plan_of(&MATRIX.replace("y: {}}", "y: {}, z: {}}"));
        let e = estimate(&m, &plan, &learned);
        assert_eq!(
            (e.cells_learned, e.cells, e.starts_learned, e.server_starts),
            (2, 3, 2, 3)
        );
        assert!(
            (e.seconds - (105.0 + 15.0 + 2.5 + 2.0 * 11.0)).abs() < 1e-9,
            "{e:?}"
        );
        assert!(
            e.assumed.contains("as this matrix's others took"),
            "{}",
            e.assumed
        );
        assert!(e.assumed.contains("length and warmup"), "{}", e.assumed);
        // Nothing stored: the assumptions alone.
        let e = estimate(&m, &plan, &Learned::default());
        assert!(
            (e.seconds - (3.0 * 10.0 + 6.0 * 11.0)).abs() < 1e-9,
            "{e:?}"
        );
        assert!(e.assumed.contains("10s per server start"), "{}", e.assumed);
        assert_eq!(Estimate::shown(e.seconds), "~1m36s");
    }
}
