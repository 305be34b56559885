//! How long a plan will take. Learned from stored runs of the same matrix where there are
//! some (how long each server took from its start to its first iteration, each cell's
//! iterations, what came between and after the deployments), assumed for what they lack,
//! and said which.
//!
//! Which runs: the newest few of the matrix, this host's when it has any (a run from another
//! machine, or from months ago, times another machine); each start and cell as the newest run
//! that has it measured it (the machine drifts: today's run says more about the next one than
//! a pooled week). A server the matrix's own runs never started starts as the same image did
//! in this host's runs of other matrices, then as the matrix's other servers did, then as its
//! family's servers did, and only then as assumed; a cell they never ran runs as the same
//! workload kind did on the same image (at the same concurrency first), then on the same
//! family. The estimate from each learned run alone gives the spread the plan shows.

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
/// How many of a matrix's stored runs an estimate learns from: the newest (older ones timed a
/// machine as it was then).
const NEWEST_RUNS: usize = 3;
/// How many of the newest starts (iterations) of an image or family stand in for a start
/// (cell) the matrix's own runs lack.
const NEWEST_STARTS: usize = 10;
const NEWEST_ITERATIONS: usize = 30;

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
    /// Whether they are this host's runs (false: another machine's, for want of any here).
    pub(crate) this_host: bool,
    /// (server, config): seconds from the deployment's start to its first iteration.
    starts: HashMap<(String, String), Vec<f64>>,
    iterations: HashMap<CellKey, Vec<Iteration>>,
    /// The gaps between a run's deployments and after the last (teardown, cooldowns, kept
    /// data sets' prepares): their median is robust to a run resumed hours later.
    between: Vec<f64>,
    /// Each run learned from, alone: the estimate's spread.
    each: Vec<Learned>,
    /// This host's server starts in runs of any matrix, newest first, by the image, build or
    /// recipe name (`image:mariadb-11.8`) and by family (`family:mysql`).
    elsewhere: HashMap<String, Vec<f64>>,
    /// This host's iterations in runs of any matrix, newest first, by image or family and
    /// workload kind (`image:mariadb-11.8|slap`), and with the concurrency (`...|slap|c8`).
    elsewhere_iterations: HashMap<String, Vec<Iteration>>,
    /// Each learned cell's server, workload kind and concurrency.
    cell_kinds: HashMap<CellKey, (String, String, u32)>,
}

/// A stored run as the estimate chooses among them.
struct Stored {
    dir: PathBuf,
    name: Option<String>,
    this_host: bool,
    started_at: String,
}

/// The stored runs of the matrix called `name` among `paths` (run directories, or folders of
/// them such as reports/runs): the newest `NEWEST_RUNS`, this host's when there are any; and
/// this host's server starts in every stored run. Only runs profiled as the plan is
/// (`profiled`): sampling the server's stacks slows every iteration. A folder that is missing
/// or a run that cannot be read adds nothing.
pub(crate) fn learn(paths: &[PathBuf], name: &str, profiled: bool) -> Learned {
    let host = crate::results::manifest::Host::probe();
    let mut stored: Vec<Stored> = (run_dirs(paths).into_iter())
        .filter(|dir| was_profiled(dir) == profiled)
        .filter_map(|dir| {
            let man = match crate::results::check::read_manifest(&dir.join(MANIFEST)) {
                Ok(man) => man?,
                Err(e) => {
                    eprintln!("warning: a stored run left out of the estimate: {e}");
                    return None;
                }
            };
            let man: Manifest = serde_json::from_value(man).ok()?;
            Some(Stored {
                name: stored_name(&dir),
                this_host: same_host(&man.host, &host),
                started_at: man.started_at,
                dir,
            })
        })
        .collect();
    // Newest first (RFC 3339 times in UTC sort as text).
    stored.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    let mine: Vec<&Stored> = (stored.iter())
        .filter(|s| s.name.as_deref() == Some(name))
        .collect();
    let this_host = mine.iter().any(|s| s.this_host);
    let mut learned = Learned {
        this_host,
        ..Learned::default()
    };
    for s in (mine.iter())
        .filter(|s| s.this_host || !this_host)
        .take(NEWEST_RUNS)
    {
        if let Ok(dir) = RunDir::open(&s.dir) {
            let mut alone = Learned::default();
            alone.add(&dir);
            learned.fill(alone);
        }
    }
    for s in stored.iter().filter(|s| s.this_host) {
        learned.add_elsewhere(&s.dir);
    }
    learned
}

/// Whether a stored run sampled its server's stacks (its `profiles/` has a file).
fn was_profiled(dir: &Path) -> bool {
    std::fs::read_dir(dir.join(crate::results::profiles::PROFILES))
        .is_ok_and(|mut entries| entries.next().is_some())
}

/// The same machine, as far as a manifest tells: name, CPU and its count.
fn same_host(a: &crate::results::manifest::Host, b: &crate::results::manifest::Host) -> bool {
    a.hostname == b.hostname && a.cpu_model == b.cpu_model && a.cpus == b.cpus
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

    /// Another run learned from, older than those before it: what they lack (a start, a cell,
    /// the gaps) is taken from it; and it is kept alone for the spread.
    fn fill(&mut self, alone: Learned) {
        if alone.runs.is_empty() {
            return;
        }
        self.runs.extend(alone.runs.iter().cloned());
        for (k, v) in &alone.starts {
            self.starts.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &alone.iterations {
            self.iterations
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
        if self.between.is_empty() {
            self.between.clone_from(&alone.between);
        }
        self.each.push(alone);
    }

    /// The server starts and iterations of a run of any matrix, by each server's image or
    /// build name and family (read from its matrix copy; a copy that does not load adds
    /// nothing). Runs come newest first; each key keeps its newest samples.
    fn add_elsewhere(&mut self, dir: &Path) {
        let Ok(loaded) = crate::matrix::load_stored(&dir.join(MATRIX_COPY)) else {
            return;
        };
        let Ok(run) = RunDir::open(dir) else { return };
        let mut alone = Learned::default();
        alone.add(&run);
        let keys_of = |server: &str| loaded.matrix.servers.get(server).map(start_keys);
        for ((server, _), seconds) in &alone.starts {
            for key in keys_of(server).unwrap_or_default() {
                keep_newest(
                    self.elsewhere.entry(key).or_default(),
                    seconds,
                    NEWEST_STARTS,
                );
            }
        }
        for (cell, its) in &alone.iterations {
            let Some((server, kind, concurrency)) = alone.cell_kinds.get(cell) else {
                continue;
            };
            for key in keys_of(server).unwrap_or_default() {
                for key in [
                    format!("{key}|{kind}|c{concurrency}"),
                    format!("{key}|{kind}"),
                ] {
                    let newest = self.elsewhere_iterations.entry(key).or_default();
                    keep_newest(newest, its, NEWEST_ITERATIONS);
                }
            }
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
        let mut windows = Vec::new();
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
            for (_, row) in &mine {
                let kind = (row.server.clone(), row.kind.clone(), row.concurrency);
                self.cell_kinds.insert(row.cell_key(), kind);
            }
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
            windows.push((from, to));
        }
        // What came before the first deployment (image builds) happens once per machine.
        windows.sort();
        let ends = windows.iter().skip(1).map(|(from, _)| *from);
        for ((_, to), next) in windows.iter().zip(ends.chain([run_end])) {
            self.between.push(seconds(*to, next).max(0.0));
        }
        self.runs.push(path.to_path_buf());
    }
}

/// Adds `more` to `newest` up to `cap` samples (the runs come newest first).
fn keep_newest<T: Copy>(newest: &mut Vec<T>, more: &[T], cap: usize) {
    let room = cap.saturating_sub(newest.len());
    newest.extend(more.iter().take(room));
}

/// The names a server's starts are learned under for other matrices: its image, build or
/// recipe name, and its family.
fn start_keys(spec: &crate::servers::spec::ServerSpec) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(name) = spec.origin_name() {
        keys.push(format!("image:{name}"));
    }
    keys.push(format!("family:{}", spec.kind().name()));
    keys
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
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
    /// Cells the matrix's runs lack, estimated from this host's runs of other matrices.
    pub(crate) cells_elsewhere: usize,
    pub(crate) server_starts: u64,
    pub(crate) starts_learned: u64,
    pub(crate) learned_from: Vec<String>,
    /// Whether the runs learned from are this host's (or there were none).
    pub(crate) this_host: bool,
    /// The lowest and highest estimate from each learned run alone (two or more runs).
    pub(crate) spread_seconds: Option<(f64, f64)>,
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
/// has them, the rest assumed; with two or more learned runs, the range of their estimates
/// alone.
pub(crate) fn estimate(m: &Matrix, plan: &Plan, learned: &Learned) -> Estimate {
    let mut e = estimate_from(m, plan, learned, learned);
    if learned.each.len() >= 2 {
        let alone: Vec<f64> = (learned.each.iter())
            .map(|one| estimate_from(m, plan, one, learned).seconds)
            .collect();
        let lo = alone.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = alone.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        e.spread_seconds = Some((lo, hi));
    }
    e.this_host = learned.this_host || learned.runs.is_empty();
    e
}

/// Where a start the matrix's own runs lack comes from, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum StartFrom {
    /// This host's runs of other matrices with the same image, build or recipe.
    SameImage,
    /// The matrix's other servers in its learned runs.
    OtherServers,
    /// This host's runs of other matrices with a server of the same family.
    SameFamily,
    Assumed,
}

/// A server's start (seconds) where the matrix's own runs never started it.
fn unlearned_start(
    m: &Matrix,
    server: &str,
    typical: Option<f64>,
    elsewhere: &Learned,
) -> (f64, StartFrom) {
    let keys = m.servers.get(server).map(start_keys).unwrap_or_default();
    let seen = |prefix: &str| {
        (keys.iter())
            .filter(|k| k.starts_with(prefix))
            .find_map(|k| median(elsewhere.elsewhere.get(k)?.clone()))
    };
    if let Some(s) = seen("image:") {
        return (s, StartFrom::SameImage);
    }
    if let Some(s) = typical {
        return (s, StartFrom::OtherServers);
    }
    if let Some(s) = seen("family:") {
        return (s, StartFrom::SameFamily);
    }
    (ASSUMED_START.as_secs_f64(), StartFrom::Assumed)
}

/// A cell the matrix's own runs never ran: as the same workload kind ran on the same image
/// (at the same concurrency first), else on the same family, in this host's other runs.
fn iteration_elsewhere(m: &Matrix, c: &Cell, elsewhere: &Learned) -> Option<f64> {
    let kind = m.workloads.get(&c.workload)?.kind();
    let servers = start_keys(m.servers.get(&c.server)?);
    let keys = (servers.iter()).flat_map(|s| {
        [
            format!("{s}|{kind}|c{}", c.concurrency),
            format!("{s}|{kind}"),
        ]
    });
    let its = keys
        .filter_map(|k| elsewhere.elsewhere_iterations.get(&k))
        .find(|its| !its.is_empty())?;
    Some(learned_iteration(its, m.length))
}

fn estimate_from(m: &Matrix, plan: &Plan, learned: &Learned, elsewhere: &Learned) -> Estimate {
    let length_s = |l: Length| match l {
        Length::Queries(n) => n as f64 / ASSUMED_QPS,
        Length::Time(d) => d.as_secs_f64(),
    };
    let assumed_iteration = m.length.map_or(0.0, length_s) + m.warmup.map_or(0.0, length_s) + 1.0;
    let starts_per = match m.repeat.restart {
        true => u64::from(m.iterations),
        false => 1,
    };
    // An unlearned server starts as the same image did elsewhere, else as this matrix's
    // other servers did, else as its family's, else as assumed.
    let typical_start = median(learned.starts.values().flatten().copied().collect());
    let between = median(learned.between.clone()).unwrap_or(0.0);
    let mut e = Estimate {
        learned_from: (learned.runs.iter())
            .map(|p| p.display().to_string())
            .collect(),
        ..Estimate::default()
    };
    let mut start_from = std::collections::BTreeSet::new();
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
                let (s, from) = unlearned_start(m, &d.server, typical_start, elsewhere);
                start_from.insert(from);
                s * starts_per as f64 + between
            }
        };
        for c in &d.cells {
            let per = match learned.iterations.get(&c.key()) {
                Some(its) => {
                    e.cells_learned += 1;
                    learned_iteration(its, m.length)
                }
                None => match iteration_elsewhere(m, c, elsewhere) {
                    Some(per) => {
                        e.cells_elsewhere += 1;
                        per
                    }
                    None => assumed_iteration,
                },
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
    e.assumed = assumptions(m, &e, &start_from, data_line);
    e
}

/// A learned cell's iteration at the planned length: what it spent outside its measured
/// phase, plus the phase at this plan's length (a count at the rate it ran).
fn learned_iteration(its: &[Iteration], length: Option<Length>) -> f64 {
    // Means, and their difference unclipped: the walls come from times stored to the second,
    // so short iterations have walls of 0 s and 1 s around phases of 0.4 s. Their means add
    // up to the run; a median, or a difference clipped per iteration or per cell, does not
    // (a cell whose walls fell short of its phases makes up for one whose walls ran over).
    let around = mean(its.iter().map(|i| i.wall))
        .zip(mean(its.iter().map(|i| i.measured)))
        .map(|(wall, measured)| wall - measured);
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
    (around.unwrap_or(0.0) + phase).max(0.0)
}

/// What the estimate assumed, for the plan's line; empty when it assumed nothing.
fn assumptions(
    m: &Matrix,
    e: &Estimate,
    start_from: &std::collections::BTreeSet<StartFrom>,
    data_line: String,
) -> String {
    let mut parts: Vec<String> = (start_from.iter())
        .map(|from| match from {
            StartFrom::SameImage => {
                "a server start as the same image's took in this host's other runs".to_string()
            }
            StartFrom::OtherServers => "a server start as this matrix's others took".into(),
            StartFrom::SameFamily => {
                "a server start as its family's took in this host's other runs".into()
            }
            StartFrom::Assumed => format!("{}s per server start", ASSUMED_START.as_secs()),
        })
        .collect();
    if e.cells_elsewhere > 0 {
        parts.push(format!(
            "{} cell(s) as their workload ran on the same image or family in this host's other \
             runs",
            e.cells_elsewhere
        ));
    }
    if e.cells_learned + e.cells_elsewhere < e.cells {
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
    let mut load_s = 0.0;
    let mut sets = std::collections::BTreeSet::new();
    for d in &plan.deployments {
        let Ok(layouts) = d.layouts(m) else { continue };
        let rows: u64 = layouts.iter().map(|l| l.rows).sum();
        // Each kind at its own rate: wide rows load slower.
        let rows_s: f64 = (layouts.iter())
            .map(|l| {
                let rate = l
                    .load_rows_per_s
                    .map_or(ASSUMED_PREPARE_ROWS_PER_S, f64::from);
                l.rows as f64 / rate
            })
            .sum();
        let family = m.servers[&d.server].kind().family();
        // The server's name stands for its image, which only the run knows.
        let set = crate::servers::dataset::DataSet::of(
            family,
            &d.server,
            &layouts,
            &m.configs[&d.config],
        );
        // Only a family with a datadir keeps a set; the others load in their deployment.
        let keeps = reuse && family.datadir().is_some();
        match (keeps, keeps && sets.insert(set.key)) {
            (true, true) => {
                prepared += rows;
                load_s += rows_s;
                extra_starts += 1;
                restored += rows * starts_per;
            }
            (true, false) => restored += rows * starts_per,
            (false, _) => {
                prepared += rows * starts_per;
                load_s += rows_s * starts_per as f64;
            }
        }
    }
    if prepared + restored == 0 {
        return (0.0, 0, String::new());
    }
    let seconds = load_s + restored as f64 / ASSUMED_RESTORE_ROWS_PER_S;
    // The rate the loads come to together (the assumed one when no kind says its own).
    let rate = match load_s > 0.0 {
        true => (prepared as f64 / load_s).round(),
        false => ASSUMED_PREPARE_ROWS_PER_S,
    };
    let line = match reuse {
        true => format!(
            "tables: {prepared} rows prepared into {} kept data set(s), {restored} rows restored \
             at ~{rate:.0} rows/s to prepare, \
             ~{ASSUMED_RESTORE_ROWS_PER_S:.0} rows/s to copy and check",
            sets.len()
        ),
        false => {
            format!("tables: {prepared} rows prepared at ~{rate:.0} rows/s")
        }
    };
    (seconds, extra_starts, line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::manifest::{DeploymentFacts, DeploymentStatus, Host};
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
        stored_run_of(base, MATRIX, Host::default(), 0, 1)
    }

    /// As `stored_run`, of `text` (a matrix of server `a` and configs x and y), on `host`,
    /// started `day` days later, every time in it multiplied by `slower`.
    fn stored_run_of(base: &Path, text: &str, host: Host, day: i64, slower: i64) -> PathBuf {
        let loaded = crate::matrix::load_str(text, Path::new("t.yaml")).unwrap();
        let dir = RunDir::create(base, &format!("t{day}-{slower}")).unwrap();
        std::fs::write(dir.file(MATRIX_COPY), text).unwrap();
        let plan = crate::matrix::expand(&loaded.matrix, &[]);
        let at = |s: i64| at(day * 86_400 + s * slower);
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
            host,
            deployments: vec![deployment("x", 0, 60), deployment("y", 60, 100)],
            ..Manifest::default()
        };
        std::fs::write(dir.file(MANIFEST), serde_json::to_string(&man).unwrap()).unwrap();
        for (cell, starts) in plan.cells().zip([[20, 40], [70, 85]]) {
            for (i, s) in starts.into_iter().enumerate() {
                let mut row = ResultRow::for_cell(cell, "slap", i as u32 + 1);
                row.started_at = at(s);
                row.seconds = Some(10.0 * slower as f64);
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
        let learned = learn(&[tmp.path().to_path_buf()], "t", false);
        assert_eq!(learned.runs, std::slice::from_ref(&run));
        assert!(learn(&[tmp.path().to_path_buf()], "other", false)
            .runs
            .is_empty());
        // Only a profiled plan learns from a profiled run (sampling slows its iterations).
        let profiles = run.join(crate::results::profiles::PROFILES);
        std::fs::create_dir_all(&profiles).unwrap();
        std::fs::write(profiles.join("a.folded"), "").unwrap();
        assert!(learn(&[tmp.path().to_path_buf()], "t", false)
            .runs
            .is_empty());
        assert_eq!(
            learn(&[tmp.path().to_path_buf()], "t", true).runs,
            std::slice::from_ref(&run)
        );
        std::fs::remove_dir_all(&profiles).unwrap();
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
        let learned = learn(&[tmp.path().to_path_buf()], "t", false);
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

    /// This host's runs before another machine's, however new; of those the newest three;
    /// and the spread of their estimates alone.
    #[test]
    fn this_hosts_newest_runs_are_learned_and_their_spread_said() {
        let tmp = tempfile::tempdir().unwrap();
        let here = Host::probe();
        let elsewhere = Host {
            hostname: format!("not-{}", here.hostname),
            ..here.clone()
        };
        stored_run_of(tmp.path(), MATRIX, elsewhere, 9, 1);
        let oldest = stored_run_of(tmp.path(), MATRIX, here.clone(), 1, 3);
        for (day, slower) in [(2, 1), (3, 2), (4, 1)] {
            stored_run_of(tmp.path(), MATRIX, here.clone(), day, slower);
        }
        let learned = learn(&[tmp.path().to_path_buf()], "t", false);
        assert!(learned.this_host);
        assert_eq!(learned.runs.len(), 3, "{:?}", learned.runs);
        assert!(!learned.runs.contains(&oldest), "{:?}", learned.runs);
        assert!(learned.runs.iter().all(|r| !r.ends_with("t9-1")));
        let (m, plan) = plan_of(MATRIX);
        let e = estimate(&m, &plan, &learned);
        // Alone, the run at 1x estimates 105 s; the one at 2x, 170 s: its starts (40 s and
        // 20 s), gaps (5 s each) and what its iterations spent around their phase (20 s and
        // 10 s) doubled, its phases at the planned 10 s.
        assert_eq!(e.spread_seconds, Some((105.0, 170.0)), "{e:?}");
        // Only another machine's run: learned from, and said.
        let other = tempfile::tempdir().unwrap();
        let elsewhere = Host {
            cpus: here.cpus + 1,
            ..here
        };
        stored_run_of(other.path(), MATRIX, elsewhere, 0, 1);
        let learned = learn(&[other.path().to_path_buf()], "t", false);
        assert_eq!((learned.runs.len(), learned.this_host), (1, false));
    }

    /// A server this matrix's runs never started starts as the same image did in this
    /// host's run of another matrix, its cells run as the same workload kind did there, and
    /// the plan says so.
    #[test]
    fn an_unlearned_server_starts_as_its_image_did_in_another_matrix() {
        let tmp = tempfile::tempdir().unwrap();
        let here = Host::probe();
        // Another matrix's run of image example/b: its server a is ready 20 s and 10 s after
        // its starts (median 15 s).
        let other = MATRIX
            .replace("name: t", "name: other")
            .replace("example/a:1", "example/b:1");
        stored_run_of(tmp.path(), &other, here.clone(), 0, 1);
        let learned = learn(&[tmp.path().to_path_buf()], "t", false);
        assert!(learned.runs.is_empty());
        let two = MATRIX.replace("a: {image: example/a:1}", "a: {image: example/b:1}");
        let (m, plan) = plan_of(&two);
        let e = estimate(&m, &plan, &learned);
        // 2 deployments, each a 15 s start; 4 iterations as the same kind ran on the image
        // there: 10 s measured, and 10 s and 5 s around it (the median of the 4: 7.5 s).
        assert!(
            (e.seconds - (2.0 * 15.0 + 4.0 * 17.5)).abs() < 1e-9,
            "{e:?}"
        );
        assert!(e.assumed.contains("same image"), "{}", e.assumed);
        assert_eq!((e.cells_elsewhere, e.cells_learned), (2, 0));
        assert!(
            e.assumed.contains("2 cell(s) as their workload ran"),
            "{}",
            e.assumed
        );
    }

    /// A run resumed an hour after its first deployment: the hour is one gap of three, and
    /// the median gap (5 s) is what each deployment adds.
    #[test]
    fn a_resumed_runs_pause_is_not_a_cost_of_its_deployments() {
        let text = MATRIX.replace("y: {}}", "y: {}, z: {}}");
        let (_, plan) = plan_of(&text);
        // x from 0 s to 30 s, y an hour later for 30 s, z 5 s after; the run ends 5 s later.
        let windows = [("x", 0, 30), ("y", 3630, 3660), ("z", 3665, 3695)];
        let mut rows = Vec::new();
        let deployments = (windows.iter().zip(plan.cells()))
            .map(|((config, from, to), cell)| {
                let mut row = ResultRow::for_cell(cell, "slap", 1);
                row.started_at = at(from + 5);
                row.seconds = Some(10.0);
                rows.push(row);
                DeploymentFacts {
                    server: "a".into(),
                    config: config.to_string(),
                    status: DeploymentStatus::Ok,
                    started_at: at(*from),
                    finished_at: Some(at(*to)),
                    ..DeploymentFacts::default()
                }
            })
            .collect();
        let man = Manifest {
            started_at: at(0),
            finished_at: Some(at(3700)),
            deployments,
            ..Manifest::default()
        };
        let mut learned = Learned::default();
        learned.add_run(Path::new("r"), &serde_json::to_value(&man).unwrap(), &rows);
        assert_eq!(learned.between, [3600.0, 5.0, 5.0]);
        assert_eq!(median(learned.between), Some(5.0));
    }

    /// Times stored to the second: iterations of 0.4 s have walls of 0 s and 1 s; what they
    /// spent around their phase is the mean wall less the mean phase (0.1 s), not the 0.6 s
    /// of the walls that reached a second.
    #[test]
    fn walls_stored_to_the_second_add_up_to_the_run() {
        let its: Vec<Iteration> = ([0.0, 1.0, 0.0, 1.0].into_iter())
            .map(|wall| Iteration {
                wall,
                measured: 0.4,
                queries: None,
            })
            .collect();
        let per = learned_iteration(&its, None);
        assert!((per - 0.5).abs() < 1e-9, "{per}");
    }

    /// Each kind's rows at its own prepare rate: oltp's at the assumed one, tpcc's wider rows
    /// at the rate its layout says, and the plan's line the rate they come to together.
    #[test]
    fn each_kind_prepares_at_its_own_rate() {
        let m = "name: t\nservers: {a: {image: mariadb:11}}\nlength: 10s\nworkloads:\n  \
                 o: {oltp: {tables: 1, table_size: 150000}}\n  t: {tpcc: {warehouses: 2}}\n";
        let (m, plan) = plan_of(m);
        let (seconds, starts, line) = data_estimate(&m, &plan);
        let tpcc = 2.0 * crate::workloads::tpcc::load::ROWS_PER_WAREHOUSE as f64;
        let want = 1.0 + tpcc / f64::from(crate::workloads::tpcc::load::ASSUMED_LOAD_ROWS_PER_S);
        assert!((seconds - want).abs() < 1e-9, "{seconds} {want}");
        assert_eq!(starts, 0);
        let rate = ((150_000.0 + tpcc) / want).round();
        assert!(
            line.ends_with(&format!("rows prepared at ~{rate:.0} rows/s")),
            "{line}"
        );
    }
}
