//! The run loop's behaviours, driven through a double of its one seam (`Backend`): round
//! order, restarts, adaptive repeats, resume, sweeps, the pool and Ctrl-C. The double
//! stands in for Docker and the servers only here; integration tests use real ones.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::sync::Notify;

use super::backend::{Backend, Started};
use super::*;
use crate::servers::deployed::Endpoint;

/// What the double was asked to do, in order: (engine, event).
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Start(String),
    Measure(String, u32),
    Stop(String),
    /// The CPUs the next servers start on (a duet's round).
    Place(Option<String>),
}

type Log = Rc<RefCell<Vec<(&'static str, Event)>>>;

/// Throughput of (cell, iteration).
type Qps = Rc<dyn Fn(&Cell, u32) -> f64>;

/// A world whose servers start at once and whose cells measure what `qps` says.
struct Double {
    engine: &'static str,
    log: Log,
    /// Throughput of (cell, iteration); p99 is the concurrency in ms (rising with load).
    qps: Qps,
    /// Servers whose start fails.
    fail_start: HashSet<String>,
    /// Servers that start with a variant that did not take effect.
    mismatch: HashSet<String>,
    /// (cell key, iteration) measurements that fail.
    fail: HashSet<(String, u32)>,
    /// (cell key, iteration) measurements whose phase lasted this long (the server paused).
    lasted: HashMap<(String, u32), f64>,
    /// Other rmatrix runs on the engine.
    beside: u32,
    /// The engine stops answering after this many measurements (and they fail).
    dies_after: Option<usize>,
    /// After this many measurements the next one never returns, and `stopped` is told: the
    /// test then drops the loop, as Ctrl-C does.
    hang_after: Option<usize>,
    stopped: Rc<Notify>,
    measured: usize,
    /// Virtual time: a measurement takes `step`, a cooldown its length.
    t0: Instant,
    elapsed: RefCell<Duration>,
    step: Duration,
    /// Every start reports a restored data set.
    kept_sets: bool,
}

impl Double {
    fn new(engine: &'static str, log: &Log) -> Double {
        Double {
            engine,
            log: log.clone(),
            qps: Rc::new(|_, _| 1000.0),
            fail_start: HashSet::new(),
            mismatch: HashSet::new(),
            fail: HashSet::new(),
            lasted: HashMap::new(),
            beside: 0,
            dies_after: None,
            hang_after: None,
            stopped: Rc::new(Notify::new()),
            measured: 0,
            t0: Instant::now(),
            elapsed: RefCell::new(Duration::ZERO),
            step: Duration::from_secs(1),
            kept_sets: false,
        }
    }

    fn note(&self, e: Event) {
        self.log.borrow_mut().push((self.engine, e));
    }

    fn dead(&self) -> bool {
        self.dies_after.is_some_and(|n| self.measured >= n)
    }
}

fn deployed(slug: String, mismatch: bool) -> Deployed {
    let checks = match mismatch {
        true => vec![crate::servers::check::Check {
            setting: "log_bin".into(),
            variable: "log_bin".into(),
            expected: "ON".into(),
            actual: Some("OFF".into()),
            status: "mismatch",
        }],
        false => Vec::new(),
    };
    Deployed {
        endpoint: Endpoint {
            host: "127.0.0.1".into(),
            port: 1,
            user: "u".into(),
            password: "p".into(),
        },
        container: Some(slug),
        version: "1.0".into(),
        variables: Default::default(),
        checks,
        socket: None,
        cgroup: None,
        counters: Default::default(),
        pid: None,
        data_volume: None,
        dumps: None,
    }
}

impl Backend for Double {
    async fn start(&mut self, d: &Deployment, _ddir: &Path) -> Started {
        self.note(Event::Start(d.slug()));
        let server = match self.fail_start.contains(&d.server) {
            true => Err("the double refused".to_string()),
            false => Ok(deployed(d.slug(), self.mismatch.contains(&d.server))),
        };
        let data = self
            .kept_sets
            .then(|| DataFacts {
                how: DataHow::Restored,
                dataset: Some("00ff".into()),
                seconds: Some(0.5),
                ..DataFacts::default()
            })
            .into_iter()
            .collect();
        Started {
            container: Some(d.slug()),
            server,
            data,
        }
    }

    async fn measure(&mut self, cell: &Cell, i: u32, _deployed: &Deployed) -> CellOutput {
        if self.hang_after.is_some_and(|n| self.measured >= n) {
            self.stopped.notify_one();
            std::future::pending::<()>().await;
        }
        self.note(Event::Measure(cell.key().as_str().to_string(), i));
        let dead = self.dead();
        self.measured += 1;
        *self.elapsed.borrow_mut() += self.step;
        let mut row = ResultRow::for_cell(cell, "slap", i);
        if dead || self.fail.contains(&(cell.key().as_str().to_string(), i)) {
            row = row.failed("the double failed it");
        } else {
            let qps = (self.qps)(cell, i);
            row.status = crate::model::row::Status::Ok;
            row.qps = Some(qps);
            row.queries = Some(qps as u64);
            row.lat_p95_ms = Some(cell.concurrency as f64 / 2.0);
            row.lat_p99_ms = Some(cell.concurrency as f64);
            row.errors = Some(0);
            let key = (cell.key().as_str().to_string(), i);
            row.seconds = Some(self.lasted.get(&key).copied().unwrap_or(2.0));
        }
        CellOutput {
            row,
            counters: Default::default(),
            samples: Vec::new(),
            warmup_samples: Vec::new(),
            operations: Vec::new(),
            server_seconds: Vec::new(),
            profile: None,
            counted_functions: None,
            loaded: None,
        }
    }

    async fn stop(&mut self, deployed: &Deployed, _ddir: &Path) -> Result<()> {
        let slug = deployed.container.clone().unwrap_or_default();
        self.note(Event::Stop(slug));
        Ok(())
    }

    async fn oom_killed(&self, _deployed: &Deployed) -> bool {
        false
    }

    async fn other_runs(&self) -> Option<u32> {
        Some(self.beside)
    }

    async fn alive(&self) -> bool {
        !self.dead()
    }

    async fn pause(&self, d: Duration) {
        *self.elapsed.borrow_mut() += d;
    }

    fn now(&self) -> Instant {
        self.t0 + *self.elapsed.borrow()
    }

    fn place(&mut self, cpuset: Option<String>) {
        self.note(Event::Place(cpuset));
    }
}

/// A run directory in a temporary folder, with its matrix and manifest.
struct Bench {
    loaded: LoadedMatrix,
    dir: RunDir,
    man: Mutex<Manifest>,
    progress: Progress,
    _tmp: tempfile::TempDir,
}

const SERVERS: &str = "servers:\n  a: {image: example/a:1}\n  b: {image: example/b:1}\n";

fn bench(yaml: &str) -> Bench {
    let tmp = tempfile::tempdir().expect("temp dir");
    let text = format!("name: double\n{yaml}");
    let loaded = crate::matrix::load_str(&text, &tmp.path().join("m.yaml"))
        .unwrap_or_else(|e| panic!("matrix: {e}\n{text}"));
    let dir = RunDir {
        path: tmp.path().join("run"),
    };
    std::fs::create_dir_all(&dir.path).expect("run dir");
    let man = Manifest {
        engines: ["e1", "e2", "e3"]
            .iter()
            .map(|n| EngineFacts {
                name: n.to_string(),
                ..EngineFacts::default()
            })
            .collect(),
        ..Manifest::default()
    };
    Bench {
        loaded,
        dir,
        man: Mutex::new(man),
        progress: Progress::new(0, true),
        _tmp: tmp,
    }
}

impl Bench {
    fn shared<'a>(&'a self, done: &'a Done, pooled: bool) -> RunShared<'a> {
        let m = &self.loaded.matrix;
        RunShared {
            loaded: &self.loaded,
            dir: &self.dir,
            done,
            run_id: "t",
            instance: "",
            progress: &self.progress,
            man: &self.man,
            seed: m.repeat.seed.unwrap_or(1),
            pooled,
            client_engine: None,
        }
    }

    fn deployments(&self) -> Vec<Deployment> {
        expand(&self.loaded.matrix, &[]).deployments
    }

    /// One worker on `double`, with `done` measured before.
    async fn run(&self, done: &Done, double: Double) -> Result<()> {
        let shared = self.shared(done, false);
        RunCtx::new(&shared, None, double)
            .run_deployments(&self.deployments())
            .await
    }

    /// Like `run`, dropped (as Ctrl-C drops it) once the double hangs.
    async fn run_until_stopped(&self, done: &Done, double: Double) {
        let stopped = double.stopped.clone();
        tokio::select! {
            r = self.run(done, double) => r.expect("run"),
            _ = stopped.notified() => {}
        }
    }

    /// What a resumed attempt starts from (the rows that succeeded).
    fn done(&self) -> Done {
        measured_ok(&self.dir.rows().expect("rows"))
    }

    fn rows(&self) -> Vec<ResultRow> {
        self.dir.current_rows().expect("rows")
    }
}

fn log() -> Log {
    Rc::new(RefCell::new(Vec::new()))
}

/// The events without their engine.
fn events(log: &Log) -> Vec<Event> {
    log.borrow().iter().map(|(_, e)| e.clone()).collect()
}

fn measures(log: &Log) -> Vec<(String, u32)> {
    events(log)
        .into_iter()
        .filter_map(|e| match e {
            Event::Measure(k, i) => Some((k, i)),
            _ => None,
        })
        .collect()
}

/// The deployment (`a-x`-like slug prefix: its server) each round's measurement ran on.
fn servers_in_order(log: &Log) -> Vec<(String, u32)> {
    measures(log)
        .into_iter()
        .map(|(k, i)| (k.split('|').next().unwrap_or("").to_string(), i))
        .collect()
}

const TWO: &str = "configs: {x: {}}\nengines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: key}}\nconcurrency: [1]\nlength: 2s\n";

#[tokio::test]
async fn interleaved_rounds_alternate_and_keep_each_server_up_between_its_rounds() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 3\nrepeat: {{order: interleaved}}\n"
    ));
    let log = log();
    b.run(&Done::new(), Double::new("e1", &log))
        .await
        .expect("run");
    let order: Vec<(String, u32)> = servers_in_order(&log);
    let want: Vec<(String, u32)> = (1..=3)
        .flat_map(|r| [("a".to_string(), r), ("b".to_string(), r)])
        .collect();
    assert_eq!(order, want);
    let starts = events(&log)
        .iter()
        .filter(|e| matches!(e, Event::Start(_)))
        .count();
    assert_eq!(starts, 2, "one server per deployment: {:?}", events(&log));
    let ev = events(&log);
    let last_a = ev
        .iter()
        .rposition(|e| matches!(e, Event::Measure(k, _) if k.starts_with("a")))
        .expect("a measured");
    let stop_a = ev
        .iter()
        .position(|e| matches!(e, Event::Stop(s) if s.starts_with('a')))
        .expect("a stopped");
    assert!(stop_a > last_a, "a stops after its last round: {ev:?}");
    assert_eq!(b.rows().len(), 6);
}

#[tokio::test]
async fn sequential_order_runs_every_round_of_one_deployment_first() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 2\nrepeat: {{order: sequential}}\n"
    ));
    let log = log();
    b.run(&Done::new(), Double::new("e1", &log))
        .await
        .expect("run");
    let want = [("a", 1), ("a", 2), ("b", 1), ("b", 2)].map(|(s, i)| (s.to_string(), i));
    assert_eq!(servers_in_order(&log), want);
}

#[tokio::test]
async fn shuffled_order_follows_its_seed() {
    let four = "servers:\n  a: {image: x/a:1}\n  b: {image: x/b:1}\n  c: {image: x/c:1}\n  d: {image: x/d:1}\n";
    let order_of = |seed: u64| async move {
        let b = bench(&format!(
            "{four}{TWO}iterations: 4\nrepeat: {{order: shuffled, seed: {seed}}}\n"
        ));
        let log = log();
        b.run(&Done::new(), Double::new("e1", &log))
            .await
            .expect("run");
        servers_in_order(&log)
    };
    let a = order_of(7).await;
    assert_eq!(a, order_of(7).await, "the seed pins the order");
    assert_ne!(a, order_of(8).await, "another seed, another order");
    for r in 1..=4 {
        let round: BTreeSet<&str> = a
            .iter()
            .filter(|(_, i)| *i == r)
            .map(|(s, _)| s.as_str())
            .collect();
        assert_eq!(round.len(), 4, "every deployment once in round {r}: {a:?}");
    }
}

#[tokio::test]
async fn restart_starts_a_fresh_server_for_every_round() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 3\nrepeat: {{restart: true}}\n"
    ));
    let log = log();
    b.run(&Done::new(), Double::new("e1", &log))
        .await
        .expect("run");
    let ev = events(&log);
    let starts = ev.iter().filter(|e| matches!(e, Event::Start(_))).count();
    let stops = ev.iter().filter(|e| matches!(e, Event::Stop(_))).count();
    assert_eq!((starts, stops), (6, 6), "{ev:?}");
    // start, measure, stop: one round per server life.
    for w in ev.chunks(3) {
        assert!(
            matches!(w, [Event::Start(_), Event::Measure(..), Event::Stop(_)]),
            "{w:?}"
        );
    }
    let man = b.man.lock().expect("manifest");
    assert!(man.deployments.iter().all(|f| f.starts == 3));
}

#[tokio::test]
async fn each_start_records_how_it_got_its_tables_under_its_own_start_number() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 2\nrepeat: {{restart: true}}\n"
    ));
    let log = log();
    let mut double = Double::new("e1", &log);
    double.kept_sets = true;
    b.run(&Done::new(), double).await.expect("run");
    let man = b.man.lock().expect("manifest");
    let mut seen: Vec<(String, u32)> = man
        .data
        .iter()
        .map(|f| (f.server.clone(), f.start))
        .collect();
    seen.sort();
    let want: Vec<(String, u32)> = [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
        .iter()
        .map(|(s, n)| (s.to_string(), *n))
        .collect();
    assert_eq!(seen, want);
    assert!(man.data.iter().all(|f| f.how == DataHow::Restored));
}

#[tokio::test]
async fn a_server_that_fails_to_start_fails_its_cells_and_the_run_goes_on() {
    let b = bench(&format!("{SERVERS}{TWO}iterations: 2\n"));
    let log = log();
    let mut double = Double::new("e1", &log);
    double.fail_start.insert("a".into());
    double.mismatch.insert("b".into());
    b.run(&Done::new(), double).await.expect("run");
    let rows = b.rows();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| !r.is_ok()));
    let a = rows.iter().find(|r| r.server == "a").expect("a");
    assert!(a
        .error
        .contains("server failed to start: the double refused"));
    let bb = rows.iter().find(|r| r.server == "b").expect("b");
    assert!(
        bb.error.contains("expected ON, server reports OFF"),
        "{}",
        bb.error
    );
    // a failed start is tried once, not per round; the mismatched server is stopped.
    let ev = events(&log);
    assert_eq!(
        ev.iter().filter(|e| matches!(e, Event::Start(_))).count(),
        2
    );
    assert!(measures(&log).is_empty());
    assert!(ev.contains(&Event::Stop("b__x".into())), "{ev:?}");
    let man = b.man.lock().expect("manifest");
    let status: Vec<_> = man.deployments.iter().map(|f| f.status).collect();
    assert_eq!(
        status,
        [DeploymentStatus::Failed, DeploymentStatus::ConfigMismatch]
    );
}

/// Cell `a` alternates 1000 and 2000 q/s (always noisy), `b` is steady.
fn noisy_a() -> Qps {
    Rc::new(|c: &Cell, i: u32| match c.server.as_str() {
        "a" => 1000.0 * (1 + i % 2) as f64,
        _ => 1000.0 + i as f64,
    })
}

#[tokio::test]
async fn until_cv_repeats_only_noisy_cells_up_to_max_iterations() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 3\nrepeat: {{until_cv: 5, max_iterations: 6}}\n"
    ));
    let log = log();
    let mut double = Double::new("e1", &log);
    double.qps = noisy_a();
    b.run(&Done::new(), double).await.expect("run");
    let per = |s: &str| {
        servers_in_order(&log)
            .iter()
            .filter(|(x, _)| x == s)
            .count()
    };
    assert_eq!((per("a"), per("b")), (6, 3));
}

#[tokio::test]
async fn until_cv_stops_when_max_time_is_used_up() {
    // Each measurement takes 1 s of the double's clock, and the budget is read before
    // each adaptive round: rounds 4 to 7 of the noisy cell start within the 4 s, round 8
    // does not.
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 3\nrepeat: {{until_cv: 5, max_iterations: 20, max_time: 4s}}\n"
    ));
    let log = log();
    let mut double = Double::new("e1", &log);
    double.qps = noisy_a();
    b.run(&Done::new(), double).await.expect("run");
    let a = servers_in_order(&log)
        .iter()
        .filter(|(x, _)| x == "a")
        .count();
    assert_eq!(a, 3 + 4, "{:?}", servers_in_order(&log));
}

#[tokio::test]
async fn until_cv_settles_once_the_cells_are_steady() {
    let b = bench(&format!(
        "{SERVERS}{TWO}iterations: 3\nrepeat: {{until_cv: 5, max_iterations: 8}}\n"
    ));
    let log = log();
    b.run(&Done::new(), Double::new("e1", &log))
        .await
        .expect("run");
    assert_eq!(measures(&log).len(), 6, "nothing noisy: no repeats");
}

/// `b` against the baseline `a`, in interleaved rounds: 10% apart either way in rounds 1-3,
/// then equal; `c` equal to `a` from the start.
fn wide_then_narrow() -> Qps {
    Rc::new(|c: &Cell, i: u32| match (c.server.as_str(), i) {
        ("b", 1..=3) => 1000.0 * (1.0 + 0.1 * [1.0, -1.0][i as usize % 2]),
        _ => 1000.0,
    })
}

/// `until_interval` repeats a cell while its change against the baseline is wider than the
/// target, and its baseline cell with it (one paired round needs both); a cell already
/// narrow (`c`) is not repeated. It settles before `max_iterations`.
#[tokio::test]
async fn until_interval_repeats_a_wide_change_with_its_baseline_until_it_narrows() {
    let servers = "servers:\n  a: {image: example/a:1}\n  b: {image: example/b:1}\n  \
                   c: {image: example/c:1}\n";
    let b = bench(&format!(
        "{servers}{TWO}iterations: 3\nrepeat: {{order: interleaved, until_interval: 5, \
         max_iterations: 20}}\nreport: {{baseline: {{server: a}}}}\n"
    ));
    let log = log();
    let mut double = Double::new("e1", &log);
    double.qps = wide_then_narrow();
    b.run(&Done::new(), double).await.expect("run");
    let per = |s: &str| {
        servers_in_order(&log)
            .iter()
            .filter(|(x, _)| x == s)
            .count()
    };
    let (a, bb, c) = (per("a"), per("b"), per("c"));
    assert_eq!(a, bb, "{:?}", servers_in_order(&log));
    assert!(bb > 3 && bb < 20, "{bb}");
    assert_eq!(c, 3);
    // What stopped it: b's change is now within ±5 points.
    let rows = b.rows();
    let m = &b.loaded.matrix;
    assert!(wide_changes(m, &rows, 5.0).is_empty());
    let mut fewer = rows.clone();
    fewer.retain(|r| r.iteration < bb as u32);
    assert!(!wide_changes(m, &fewer, 5.0).is_empty());
}

#[tokio::test]
async fn resume_measures_exactly_the_missing_iterations_and_supersedes_failures() {
    let b = bench(&format!("{SERVERS}{TWO}iterations: 3\n"));
    let keys: Vec<String> = b
        .deployments()
        .iter()
        .flat_map(|d| d.cells.iter().map(|c| c.key().as_str().to_string()))
        .collect();
    let log1 = log();
    let mut first = Double::new("e1", &log1);
    first.fail.insert((keys[0].clone(), 2));
    first.hang_after = Some(4);
    b.run_until_stopped(&Done::new(), first).await;
    let before: Vec<(String, u32)> = measures(&log1);
    assert_eq!(before.len(), 4);

    let done = b.done();
    assert_eq!(done.len(), 3, "the failure is not done: {done:?}");
    let log2 = log();
    b.run(&done, Double::new("e1", &log2))
        .await
        .expect("resume");
    let again: HashSet<(String, u32)> = measures(&log2).into_iter().collect();
    let all: HashSet<(String, u32)> = keys
        .iter()
        .flat_map(|k| (1..=3).map(move |i| (k.clone(), i)))
        .collect();
    let ok_before: HashSet<(String, u32)> = done
        .iter()
        .map(|(k, i)| (k.as_str().to_string(), *i))
        .collect();
    assert_eq!(measures(&log2).len(), again.len(), "each pair once");
    assert_eq!(again, &all - &ok_before);
    assert!(again.contains(&(keys[0].clone(), 2)));
    let rows = b.rows();
    assert_eq!(rows.len(), 6, "one current row per iteration");
    assert!(rows.iter().all(|r| r.is_ok()), "the failure was superseded");
    assert_eq!(b.dir.rows().expect("rows").len(), 7, "and stays on record");
}

/// Throughput that doubles with connections up to 8 and is flat after (a knee at 8),
/// with a little deterministic noise per iteration.
fn saturating() -> Qps {
    Rc::new(|c: &Cell, i: u32| {
        let wobble = [1.0, 0.99, 1.01, 1.005][(i as usize + c.concurrency as usize) % 4];
        1000.0 * (c.concurrency.min(8) as f64) * wobble
    })
}

const SWEEP: &str = "servers:\n  a: {image: example/a:1}\nconfigs: {x: {}}\nengines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: key}}\nconcurrency: {from: 1, factor: 2, to: 128}\nload: {until: knee}\niterations: 2\nlength: 2s\n";

/// The distinct levels measured, and every (level, iteration) pair measured ok.
fn levels(b: &Bench) -> (BTreeSet<u32>, BTreeSet<(u32, u32)>) {
    let rows = b.rows();
    (
        rows.iter().map(|r| r.concurrency).collect(),
        rows.iter()
            .filter(|r| r.is_ok())
            .map(|r| (r.concurrency, r.iteration))
            .collect(),
    )
}

#[tokio::test]
async fn a_knee_sweep_stops_past_its_knee_and_at_the_same_level_on_every_resume() {
    let whole = bench(SWEEP);
    let log0 = log();
    let mut double = Double::new("e1", &log0);
    double.qps = saturating();
    whole.run(&Done::new(), double).await.expect("run");
    let (want, pairs) = levels(&whole);
    assert_eq!(
        want.iter().copied().max(),
        Some(16),
        "stops after the level past the knee: {want:?}"
    );
    let n = measures(&log0).len();
    // Interrupted after every possible number of measurements, then resumed: the same levels.
    for k in 1..n {
        let b = bench(SWEEP);
        let mut first = Double::new("e1", &log());
        first.qps = saturating();
        first.hang_after = Some(k);
        b.run_until_stopped(&Done::new(), first).await;
        let mut resumed = Double::new("e1", &log());
        resumed.qps = saturating();
        b.run(&b.done(), resumed).await.expect("resume");
        assert_eq!(
            levels(&b),
            (want.clone(), pairs.clone()),
            "interrupted after {k}"
        );
    }
}

#[tokio::test]
async fn a_pool_hands_a_lost_engines_queue_to_the_others() {
    let four = "servers:\n  a: {image: x/a:1}\n  b: {image: x/b:1}\n  c: {image: x/c:1}\n  d: {image: x/d:1}\n";
    let b = bench(&format!("{four}{TWO}iterations: 2\n"));
    let log = log();
    let mut dying = Double::new("e1", &log);
    dying.dies_after = Some(1);
    let healthy = Double::new("e2", &log);
    let done = Done::new();
    let shared = b.shared(&done, true);
    let ctxs = vec![
        RunCtx::new(&shared, Some("e1".into()), dying),
        RunCtx::new(&shared, Some("e2".into()), healthy),
    ];
    let lost = run_pool(ctxs, &b.deployments()).await.expect("pool");
    assert_eq!(lost, None, "e2 stayed");
    let rows = b.rows();
    assert_eq!(rows.len(), 8, "every iteration has a row");
    // e1 measured a's first round, failed its second and left the pool; e2 ran the rest.
    let by_e1: Vec<&ResultRow> = rows.iter().filter(|r| r.docker_engine == "e1").collect();
    assert_eq!(by_e1.len(), 2, "{rows:?}");
    assert!(by_e1.iter().all(|r| r.server == "a"));
    assert!(rows
        .iter()
        .filter(|r| r.server != "a")
        .all(|r| r.is_ok() && r.docker_engine == "e2"));
    let man = b.man.lock().expect("manifest");
    let lost = man.engines.iter().find(|e| e.name == "e1").expect("e1");
    assert_eq!(lost.lost.as_deref(), Some("engine e1 stopped answering"));
}

#[tokio::test]
async fn a_pool_with_no_engine_left_fails_what_is_queued() {
    let b = bench(&format!("{SERVERS}{TWO}iterations: 1\n"));
    let log = log();
    let mut dying = Double::new("e1", &log);
    dying.dies_after = Some(0);
    let done = Done::new();
    let shared = b.shared(&done, true);
    let ctxs = vec![RunCtx::new(&shared, Some("e1".into()), dying)];
    let lost = run_pool(ctxs, &b.deployments()).await.expect("pool");
    assert_eq!(lost.as_deref(), Some("engine e1 stopped answering"));
    let rows = b.rows();
    assert_eq!(rows.len(), 2);
    let b_row = rows.iter().find(|r| r.server == "b").expect("b");
    assert!(b_row
        .error
        .contains("no engine of the pool is left to run it"));
}

/// An engine whose containers answer a removal pass with the counts in `found`.
struct Leftovers {
    found: RefCell<Vec<Result<usize, String>>>,
    passes: RefCell<usize>,
}

impl RunContainers for Leftovers {
    fn name(&self) -> &str {
        "e1"
    }

    async fn remove_run(&self, _run_id: &str, _instance: &str) -> Result<usize> {
        *self.passes.borrow_mut() += 1;
        let mut f = self.found.borrow_mut();
        match f.is_empty() {
            true => Ok(0),
            false => f.remove(0).map_err(anyhow::Error::msg),
        }
    }
}

fn leftovers(found: Vec<Result<usize, String>>) -> Leftovers {
    Leftovers {
        found: RefCell::new(found),
        passes: RefCell::new(0),
    }
}

#[tokio::test(start_paused = true)]
async fn after_ctrl_c_removal_passes_repeat_until_one_finds_nothing() {
    // A create the dropped work had sent lands after the first pass: a second pass
    // removes it, a third finds nothing.
    let e = leftovers(vec![Ok(2), Ok(1), Ok(0)]);
    assert!(remove_passes(std::slice::from_ref(&e), "t", "", true).await);
    assert_eq!(*e.passes.borrow(), 3);
    // Without an interrupt one pass is enough.
    let e = leftovers(vec![Ok(2), Ok(1)]);
    assert!(remove_passes(std::slice::from_ref(&e), "t", "", false).await);
    assert_eq!(*e.passes.borrow(), 1);
    // An engine that does not answer is reported, and no pass is repeated.
    let e = leftovers(vec![Err("gone".into())]);
    assert!(!remove_passes(std::slice::from_ref(&e), "t", "", true).await);
    assert_eq!(*e.passes.borrow(), 1);
    // At most five passes.
    let e = leftovers(vec![Ok(1); 9]);
    assert!(remove_passes(std::slice::from_ref(&e), "t", "", true).await);
    assert_eq!(*e.passes.borrow(), 5);
}

/// A 2 s cell whose phase lasted 11 s (a `docker pause` shorter than stall_timeout) is failed
/// with the reason, not recorded as a slow measurement; the others stay ok, and a resume
/// measures it again.
#[tokio::test]
async fn a_phase_the_server_sat_out_is_failed_and_a_resume_measures_it_again() {
    let b = bench(&format!("{SERVERS}{TWO}iterations: 2\n"));
    let log = log();
    let mut paused = Double::new("e1", &log);
    let key = b.deployments()[0].cells[0].key().as_str().to_string();
    paused.lasted.insert((key.clone(), 2), 10.98);
    b.run(&Done::new(), paused).await.expect("run");
    let rows = b.rows();
    let failed: Vec<&ResultRow> = rows.iter().filter(|r| !r.is_ok()).collect();
    assert_eq!(failed.len(), 1, "{rows:?}");
    assert_eq!((failed[0].server.as_str(), failed[0].iteration), ("a", 2));
    assert!(
        failed[0]
            .error
            .contains("lasted 11.0 s for a length of 2.0 s"),
        "{}",
        failed[0].error
    );
    b.run(&b.done(), Double::new("e1", &log))
        .await
        .expect("resume");
    let current = b.dir.current_rows().expect("rows");
    assert!(current.iter().all(|r| r.is_ok()), "{current:?}");
}

/// Every row records the other runs the engine had at the iteration's start and end.
#[tokio::test]
async fn each_row_records_the_other_runs_on_its_engine() {
    let b = bench(&format!("{SERVERS}{TWO}iterations: 1\n"));
    let log = log();
    let mut crowded = Double::new("e1", &log);
    crowded.beside = 2;
    b.run(&Done::new(), crowded).await.expect("run");
    let rows = b.rows();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.beside_runs == Some(2)), "{rows:?}");
}

const DUET: &str = "servers:\n  a: {image: example/a:1, cpuset: \"0\"}\n  b: {image: example/b:1, cpuset: \"1\"}\nconfigs: {x: {}}\nengines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: key}}\nconcurrency: [1, 4]\nlength: 2s\niterations: 3\nrepeat: {duet: true, restart: true, order: shuffled, seed: 5}\n";

impl Bench {
    /// Both duet sides at once, each its own double logging into `log`.
    async fn run_duet(&self, done: &Done, a: Double, b: Double) -> Result<Option<String>> {
        let shared = self.shared(done, false);
        let (a, b) = (RunCtx::new(&shared, None, a), RunCtx::new(&shared, None, b));
        duet::run_duet(a, b, &self.deployments()).await
    }
}

/// A measurement's cell without its server, and its iteration.
fn without_server(k: &str, i: u32) -> (String, u32) {
    (
        k.split_once('|').map_or("", |(_, rest)| rest).to_string(),
        i,
    )
}

/// Duet rounds: each cell's iteration is measured on both sides together (one side arrives,
/// waits, and the other's arrival lets both measure), in the same order on both.
#[tokio::test]
async fn duet_sides_measure_each_cell_together() {
    let b = bench(DUET);
    let log = log();
    let (da, db) = (Double::new("a", &log), Double::new("b", &log));
    b.run_duet(&Done::new(), da, db).await.expect("duet");
    let m = measures(&log);
    assert_eq!(m.len(), 12, "{m:?}");
    for pair in m.chunks(2) {
        let sides: BTreeSet<&str> = pair.iter().map(|(k, _)| &k[..1]).collect();
        assert_eq!(sides.len(), 2, "both sides in each pair: {m:?}");
        let (x, y) = (&pair[0], &pair[1]);
        assert_eq!(
            without_server(&x.0, x.1),
            without_server(&y.0, y.1),
            "{m:?}"
        );
    }
    assert_eq!(b.rows().len(), 12);
    // Each side starts its rounds' servers on its own CPU, then on the other's, in turn.
    let placed = |side: &str| -> Vec<String> {
        (log.borrow().iter())
            .filter(|(e, _)| *e == side)
            .filter_map(|(_, ev)| match ev {
                Event::Place(c) => Some(c.clone().unwrap_or_default()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(placed("a"), ["0", "1", "0"]);
    assert_eq!(placed("b"), ["1", "0", "1"]);
}

/// A side that cannot measure (its server failed; its rows were measured before a resume)
/// never holds up the other.
#[tokio::test]
async fn a_duet_side_that_fails_or_has_measured_does_not_hold_up_the_other() {
    let b = bench(DUET);
    let log = log();
    let (da, mut db) = (Double::new("a", &log), Double::new("b", &log));
    db.fail_start.insert("b".into());
    b.run_duet(&Done::new(), da, db).await.expect("duet");
    let rows = b.rows();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().filter(|r| r.server == "a").all(|r| r.is_ok()));
    assert!(rows.iter().filter(|r| r.server == "b").all(|r| !r.is_ok()));
    // A resume: b's rows failed, a's are done; b measures alone.
    let b2 = bench(DUET);
    let done: Done = (b2.deployments().iter())
        .filter(|d| d.server == "a")
        .flat_map(|d| d.cells.iter())
        .flat_map(|c| (1..=3).map(move |i| (c.key(), i)))
        .collect();
    let log = self::log();
    let (da, db) = (Double::new("a", &log), Double::new("b", &log));
    b2.run_duet(&done, da, db).await.expect("duet");
    let m = measures(&log);
    assert_eq!(m.len(), 6);
    assert!(m.iter().all(|(k, _)| k.starts_with('b')), "{m:?}");
}

#[test]
fn a_duet_needs_two_servers_on_cpus_of_their_own() {
    let refused = |yaml: &str| {
        let text = format!("name: d\n{yaml}");
        crate::matrix::load_str(&text, Path::new("m.yaml"))
            .expect_err("refused")
            .to_string()
    };
    let shared = DUET.replace("cpuset: \"1\"", "cpuset: \"0-1\"");
    assert!(refused(&shared).contains("duet sides share CPU 0"));
    let none = DUET.replace(", cpuset: \"0\"", "");
    assert!(refused(&none).contains("server `a` has no cpuset"));
    let three = DUET.replace(
        "configs:",
        "  c: {image: example/c:1, cpuset: \"2\"}\nconfigs:",
    );
    assert!(refused(&three).contains("the matrix has 3"));
    let adaptive = DUET.replace("duet: true,", "duet: true, until_cv: 3,");
    assert!(refused(&adaptive).contains("drop until_cv"));
}

/// Sides that would measure other cells could never meet: refused before the run starts.
#[test]
fn a_duet_whose_sides_measure_other_cells_is_refused() {
    let b = bench(&format!(
        "{DUET}exclude:\n  - {{server: b, concurrency: 4}}\n"
    ));
    let err = duet::same_cells(&b.loaded.matrix, &b.deployments()).unwrap_err();
    assert!(
        err.to_string().contains("the same configs and cells"),
        "{err}"
    );
    let same = bench(DUET);
    assert!(duet::same_cells(&same.loaded.matrix, &same.deployments()).is_ok());
}

/// A `client_cpuset` naming a CPU this process may not use is refused (the load would run
/// unpinned); one it may use, or an unknown affinity, passes.
#[test]
fn a_client_cpuset_beyond_this_hosts_cpus_is_refused() {
    let err = client_cpus_here("1,3-4", Some(vec![0, 1])).unwrap_err();
    assert_eq!(
        crate::error::error_kind(&err),
        crate::error::ErrorKind::BadInput
    );
    assert!(
        err.to_string().contains(
            "client_cpuset names CPU 3,4, which this process may not use (it may use 0,1)"
        ),
        "{err}"
    );
    assert!(client_cpus_here("1", Some(vec![0, 1])).is_ok());
    assert!(client_cpus_here("7", None).is_ok());
}
