//! One cell iteration measured against a ready server, wherever its client runs: in this
//! process, or in an rmatrix container on the engine's host (`rmatrix drive-cell`), which
//! reads a `CellSpec` and writes a `CellOutput` as JSON. Both run the same `measure`.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::matrix::model::Counted;
use crate::matrix::{Cell, Matrix};
use crate::measure::cgroup::{Cgroup, Window};
use crate::measure::interval::Sample;
use crate::measure::measurement::Measurement;
use crate::measure::operation::Operation;
use crate::measure::seconds::Live;
use crate::measure::server_seconds::ServerSecond;
use crate::measure::{counted, profile};
use crate::model::ResultRow;
use crate::servers::check::Check;
use crate::servers::engines::docker::Engine;
use crate::servers::engines::{ContainerSpec, Containers as _};
use crate::servers::family::{self, BoxFuture, HostSide};
use crate::servers::{Deployed, Endpoint};
use crate::workloads::stall::DEFAULT_STALL_TIMEOUT;
use crate::workloads::Ctx;

/// What one iteration produced: its results row and the rows of samples.csv,
/// operations.csv and counters.csv.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CellOutput {
    pub(crate) row: ResultRow,
    /// The server's counter deltas over the measured phase (an ok row's).
    #[serde(default)]
    pub(crate) counters: crate::measure::counters::Status,
    pub(crate) samples: Vec<Sample>,
    /// The warm-up's seconds (samples.csv's `warmup` phase).
    #[serde(default)]
    pub(crate) warmup_samples: Vec<Sample>,
    pub(crate) operations: Vec<Operation>,
    /// The server's counters once a second, of the warm-up and the measured phase.
    #[serde(default)]
    pub(crate) server_seconds: Vec<ServerSecond>,
    /// The server's folded stacks over the measured phase (`profile:`), one line per stack.
    #[serde(default)]
    pub(crate) profile: Option<String>,
    /// The server's instructions by function over the measured phase (`counted:`), as
    /// `results::functions` stores them.
    #[serde(default)]
    pub(crate) counted_functions: Option<String>,
    /// The tables the iteration loaded before it measured (none when they were there).
    #[serde(default)]
    pub(crate) loaded: Option<crate::measure::measurement::Loaded>,
}

/// Everything a client container needs to measure one cell iteration. The password is the
/// run's random one; the file holding it lives only inside the cell's container.
#[derive(Serialize, Deserialize)]
pub(crate) struct CellSpec {
    /// The matrix text (the client finds the cell, its workload and lengths in it).
    pub(crate) matrix: String,
    pub(crate) cell: String,
    pub(crate) iteration: u32,
    pub(crate) run_seed: u64,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: String,
    pub(crate) version: String,
    pub(crate) variables: BTreeMap<String, String>,
    /// The server's main process as the engine's host sees it (for its cgroup).
    pub(crate) server_pid: Option<u32>,
}

/// Where the cell file goes in a client container.
const SPEC_PATH: &str = "/rmatrix/cell.json";

/// The client image: this very binary (copied in from the running executable) on the
/// Debian it is built on, from the engine's local base image (no pull). Kept here, not
/// under containers/, since it is no server a matrix can name.
const CLIENT_DOCKERFILE: &str = "FROM debian:bookworm\nCOPY rmatrix /usr/local/bin/rmatrix\n";

/// Measure one iteration of `cell` against `deployed`, in this process.
pub(crate) async fn measure(
    m: &Matrix,
    cell: &Cell,
    iteration: u32,
    run_seed: u64,
    deployed: &Deployed,
    live: Arc<AtomicU64>,
    phase: Arc<Live>,
) -> CellOutput {
    let workload = &m.workloads[&cell.workload];
    let row = ResultRow::for_cell(cell, workload.kind(), iteration);
    let family = m.servers[&cell.server].kind().family();
    let window = window_for(m, cell, deployed).await;
    let ctx = Ctx {
        server: deployed,
        kind: m.servers[&cell.server].kind(),
        engine: cell.engine.as_deref(),
        concurrency: cell.concurrency,
        warmup: m.warmup,
        length: m.length,
        live,
        pace: cell
            .rate
            .map(|r| m.load.pace(r, cell_seed(run_seed, cell, iteration))),
        phase,
        window: Arc::new(window),
    };
    let stall_timeout = m
        .stall_timeout
        .and_then(|l| l.as_duration())
        .unwrap_or(DEFAULT_STALL_TIMEOUT);
    let mut meas = match workload.run(&ctx, stall_timeout).await {
        Ok(meas) => meas,
        Err(e) => return CellOutput::failed(row.failed(&format!("{e:#}"))),
    };
    with_targets(&mut meas);
    // The client's demand, where the client is this process: over the phase and each second.
    let client = ctx.window.client().filter(|_| workload.client_in_process());
    if client.is_some() {
        with_client_seconds(&mut meas, &ctx.window);
    }
    let mut row = meas.fill_row(row);
    let mut counted_functions = None;
    if let Some(d) = client.filter(|_| row.is_ok()) {
        row.client_busy_pct = Some((d.busy_pct * 10.0).round() / 10.0);
        row.client_cores = Some(d.cores);
    }
    if row.is_ok() {
        family.result_columns(&meas.server, &mut row);
        with_server_usage(&mut row, &ctx.window);
        (row, counted_functions) = with_counted(row, &ctx.window);
        // Only from a histogram: an external tool's summary cannot say.
        let t = m.report.apdex_t_ms(&cell.workload);
        if let (Some(t), true) = (t, meas.latency.count() > 0) {
            row.apdex = meas.latency.apdex(t, meas.errors).score();
            row.apdex_t_ms = Some(t);
        }
    }
    let counters = match row.is_ok() {
        true => std::mem::take(&mut meas.server),
        false => Default::default(),
    };
    CellOutput {
        row,
        counters,
        samples: std::mem::take(&mut meas.samples),
        warmup_samples: std::mem::take(&mut meas.warmup_samples),
        operations: std::mem::take(&mut meas.operations),
        server_seconds: ctx.window.take_server_seconds(),
        profile: folded_profile(&ctx.window).await,
        counted_functions,
        loaded: meas.loaded,
    }
}

impl CellOutput {
    /// An iteration that failed: its row, and nothing measured.
    fn failed(row: ResultRow) -> CellOutput {
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
}

/// Each second's target, where the pacer counted it (not sysbench's).
fn with_targets(meas: &mut Measurement) {
    if let Some(open) = meas.open.as_ref().filter(|o| !o.per_second.is_empty()) {
        for s in &mut meas.samples {
            let n = open.per_second.get((s.second as usize).saturating_sub(1));
            s.target_ps = Some(n.copied().unwrap_or(0) as f64);
        }
    }
}

/// Each second's client demand, as the window read it.
fn with_client_seconds(meas: &mut Measurement, window: &Window) {
    let per_second = window.client_seconds();
    for s in &mut meas.samples {
        let b = per_second.get((s.second as usize).saturating_sub(1));
        s.client_busy_pct = b.copied();
    }
}

/// The server's usage over the measured phase (its cgroup's): CPU, also per operation,
/// bytes read and written, context switches.
fn with_server_usage(row: &mut ResultRow, window: &Window) {
    if let (Some(used), Some(q)) = (window.used(), row.queries) {
        let cpu_s = used.cpu_ns as f64 / 1e9;
        row.srv_cpu_s = Some((cpu_s * 1e6).round() / 1e6);
        row.srv_cpu_us_per_op = (q > 0).then(|| cpu_s * 1e6 / q as f64);
        row.srv_read_bytes = Some(used.read_bytes);
        row.srv_write_bytes = Some(used.write_bytes);
        row.srv_ctx_switches = used.ctx_switches;
    }
}

/// The measured phase's window on `deployed`: its cgroup, and where the matrix asks for
/// them its per-second counters, its profile, its counted instructions.
async fn window_for(m: &Matrix, cell: &Cell, deployed: &Deployed) -> Window {
    let family = m.servers[&cell.server].kind().family();
    let mut window = Window::new(deployed.cgroup.clone());
    // A counted phase has no per-second reads: each would add its instructions.
    if m.workloads[&cell.workload].reads_server_seconds() && m.counted.is_none() {
        open_counters(family, deployed).await;
        window = window.with_counters(deployed.counters.clone());
    }
    if let Some(spec) = m.profile {
        match (deployed.pid, profile::available()) {
            (Some(pid), Ok(())) => window = window.with_profile(pid, spec.cpu),
            (None, _) => profile::say_once("the server is no container rmatrix started here"),
            (_, Err(why)) => profile::say_once(&why),
        }
    }
    match (m.counted, counted_plan(m, cell, deployed)) {
        (_, Some(plan)) => window = window.with_counted(Ok(plan)),
        (Some(_), None) => {
            let why = "the server's process is not on this host (a client container or a pool)";
            window = window.with_counted(Err(why.into()));
        }
        (None, None) => {}
    }
    window
}

/// What a counted matrix counts in `cell`'s measured phase: its server's process, where
/// its dumps land, its family's timer work.
fn counted_plan(m: &Matrix, cell: &Cell, deployed: &Deployed) -> Option<counted::Plan> {
    let server = m.servers[&cell.server].kind().family().counted()?;
    let by = match m.counted? {
        Counted::Callgrind => counted::By::Callgrind {
            dumps: deployed.dumps.clone()?,
            timer_roots: server.timer_roots,
        },
        Counted::Perf => counted::By::Perf,
    };
    Some(counted::Plan {
        pid: deployed.pid?,
        forked: server.forks,
        by,
    })
}

/// The row with the phase's counted instructions and their table by function, or failed
/// when they could not be counted (the point of a counted run).
fn with_counted(mut row: ResultRow, window: &Window) -> (ResultRow, Option<String>) {
    match window.take_counted() {
        Some(Ok(i)) => {
            row.srv_instructions = Some(i.total);
            row.srv_timer_instructions = Some(i.timer);
            row.srv_instr_per_op = row.queries.and_then(|q| i.per_op(q));
            (row, Some(crate::results::functions::render(&i.functions)))
        }
        Some(Err(why)) => (row.failed(&format!("counted mode: {why}")), None),
        None => (row, None),
    }
}

/// The measured phase's profile, folded (perf script takes a second or so: not on the
/// runtime's threads).
async fn folded_profile(window: &Window) -> Option<String> {
    let (data, dir) = window.take_profile()?;
    let folded = tokio::task::spawn_blocking(move || profile::fold_recording(&data, &dir)).await;
    match folded {
        Ok(Ok(f)) => Some(f),
        Ok(Err(e)) => {
            profile::say_once(&format!("{e:#}"));
            None
        }
        Err(_) => None,
    }
}

/// Open the deployment's counter connection once, before an iteration's own first
/// snapshot (its handshake is then no phase's work); a server that refuses it just has no
/// per-second counters, said once per deployment.
async fn open_counters(family: &'static dyn family::Family, deployed: &Deployed) {
    if !deployed.counters.is_empty() || deployed.counters.failed() {
        return;
    }
    let endpoint = deployed.endpoint.clone();
    let opened = tokio::task::spawn_blocking(move || family.counter_source(&endpoint)).await;
    match opened {
        Ok(Ok(source)) => deployed.counters.put(source),
        Ok(Err(e)) => {
            deployed.counters.mark_failed();
            let why = crate::escape::terminal(&format!("{e:#}"));
            eprintln!("no per-second server counters for this deployment: {why}");
        }
        Err(_) => deployed.counters.mark_failed(),
    }
}

/// A cell iteration's own arrivals seed, from the run's (recorded in the manifest): the same
/// run seed gives the same Poisson schedule for each cell and iteration.
pub(crate) fn cell_seed(run_seed: u64, cell: &Cell, iteration: u32) -> u64 {
    // FNV-1a: stable across builds and platforms, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in cell.key().as_str().bytes().chain(iteration.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ run_seed
}

/// `rmatrix drive-cell`: read a `CellSpec` (JSON) from `input`, measure, and print the
/// `CellOutput` as one JSON line on stdout.
pub(crate) async fn drive_cell(input: &str) -> Result<()> {
    let spec: CellSpec = serde_json::from_str(input).context("not a cell spec")?;
    let loaded = crate::matrix::load_for_client(&spec.matrix)?;
    let m = &loaded.matrix;
    let plan = crate::matrix::expand(m, &[]);
    let cell = plan
        .deployments
        .iter()
        .flat_map(|d| d.cells.iter())
        .find(|c| c.key().as_str() == spec.cell)
        .ok_or_else(|| anyhow!("the matrix has no cell {}", spec.cell))?;
    let deployed = Deployed {
        endpoint: Endpoint {
            host: spec.host.clone(),
            port: spec.port,
            user: spec.user.clone(),
            password: spec.password.clone(),
        },
        container: None,
        version: spec.version.clone(),
        variables: spec.variables.clone(),
        checks: Vec::new(),
        socket: None,
        cgroup: spec.server_pid.and_then(Cgroup::of_pid),
        counters: Default::default(),
        pid: None,
        data_volume: None,
        dumps: None,
    };
    let out = measure(
        m,
        cell,
        spec.iteration,
        spec.run_seed,
        &deployed,
        Arc::new(AtomicU64::new(0)),
        Arc::new(Live::default()),
    )
    .await;
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}

/// Build (once per content) the client image on `engine`: this binary in a Debian base.
/// The context goes through the API, so a remote engine gets it the same way.
pub(crate) async fn client_image(engine: &Engine) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find this rmatrix binary")?;
    let tmp = tempdir()?;
    std::fs::write(tmp.join("Dockerfile"), CLIENT_DOCKERFILE)?;
    std::fs::copy(&exe, tmp.join("rmatrix"))
        .with_context(|| format!("failed to copy {}", exe.display()))?;
    let built = engine.ensure_built("client", &tmp, &BTreeMap::new()).await;
    let _ = std::fs::remove_dir_all(&tmp);
    let built = built?;
    // One client image per rmatrix build: a new one replaces the others (one that a run of
    // another build still uses is refused by the engine, and left).
    if built.origin != "cached" {
        for old in (engine.tags_of(CLIENT_REPO).await).unwrap_or_default() {
            if old != built.reference {
                let _ = engine.remove_image(&old).await;
            }
        }
    }
    Ok(built.reference)
}

/// The repository of the client images (`ensure_built`'s name for "client").
pub(crate) const CLIENT_REPO: &str = "rmatrix/client";

fn tempdir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "rmatrix-client-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Where and how a client container runs.
pub(crate) struct Remote<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) image: &'a str,
    pub(crate) name: String,
    pub(crate) run_id: &'a str,
    pub(crate) instance: &'a str,
    /// The most the cell may take before its container is stopped.
    pub(crate) limit: Duration,
}

impl<'a> Remote<'a> {
    /// A client container of this run on `engine`, named after what it does.
    pub(crate) fn new(
        engine: &'a Engine,
        image: &'a str,
        run_id: &'a str,
        instance: &'a str,
        what: &str,
        limit: Duration,
    ) -> Remote<'a> {
        Remote {
            engine,
            image,
            name: format!(
                "rmatrix-{run_id}-{instance}-{what}-{:08x}",
                rand::random::<u32>()
            ),
            run_id,
            instance,
            limit,
        }
    }
}

/// Measure one cell iteration in a client container on `r.engine` (host networking, the
/// host's pid namespace and cgroups read-only for the server's usage), and collect its
/// output. The container is removed whatever happens.
pub(crate) async fn in_container(r: &Remote<'_>, spec: &CellSpec) -> Result<CellOutput> {
    let line = run_json(r, "drive-cell", serde_json::to_vec(spec)?, None).await?;
    serde_json::from_str(&line).context("unreadable client output")
}

/// Run `rmatrix <command> < input` in a container on `r.engine` and return the JSON line it
/// printed last. `watch` is a server container whose exit ends the wait early.
async fn run_json(
    r: &Remote<'_>,
    command: &str,
    input: Vec<u8>,
    watch: Option<&str>,
) -> Result<String> {
    let container = ContainerSpec {
        name: r.name.clone(),
        image: r.image.to_string(),
        args: vec![
            "sh".into(),
            "-c".into(),
            format!("exec rmatrix {command} < {SPEC_PATH}"),
        ],
        run_id: r.run_id.to_string(),
        instance: r.instance.to_string(),
        host_network: true,
        pid_host: true,
        // A server's /proc/<pid>/maps is another user's: reading it needs ptrace's read mode.
        cap_add: vec!["SYS_PTRACE".into()],
        mounts: vec![("/sys/fs/cgroup".into(), "/sys/fs/cgroup".into())],
        files: vec![(SPEC_PATH.into(), input)],
        ..ContainerSpec::default()
    };
    let id = r.engine.start(&container).await?;
    let result = collect(r, &id, command, watch).await;
    let _ = r.engine.remove(&id).await;
    result.with_context(|| format!("client container on engine {}", r.engine.name()))
}

async fn collect(r: &Remote<'_>, id: &str, command: &str, watch: Option<&str>) -> Result<String> {
    let deadline = tokio::time::Instant::now() + r.limit;
    let code = loop {
        if let Some(code) = r.engine.exit_code(id).await? {
            break code;
        }
        if let Some(server) = watch {
            if let Some(code) = r.engine.exit_code(server).await? {
                bail!("server exited with code {code} before answering");
            }
        }
        if tokio::time::Instant::now() >= deadline {
            bail!(
                "rmatrix {command} still running after {} s",
                r.limit.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let out = r.engine.stdout(id).await?;
    let text = String::from_utf8_lossy(&out);
    match (code, text.lines().rev().find(|l| l.starts_with('{'))) {
        (0, Some(line)) => Ok(line.to_string()),
        _ => {
            let log = r.engine.logs(id).await;
            bail!(
                "rmatrix {command} exited with code {code}: {}",
                crate::servers::engines::docker::tail(&log, 5)
            )
        }
    }
}

/// What an `rmatrix await-server` container needs to wait for one deployment's server and
/// read it back, on the engine's host.
#[derive(Serialize, Deserialize)]
pub(crate) struct AwaitSpec {
    pub(crate) matrix: String,
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: String,
    /// The server's main process on the engine's host (for checks of its mapped libraries).
    pub(crate) pid: Option<u32>,
    pub(crate) timeout_s: u64,
}

/// What the server reported: `Deployed` without what only the orchestrator knows.
#[derive(Serialize, Deserialize)]
pub(crate) struct ServerFacts {
    pub(crate) version: String,
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) checks: Vec<Check>,
}

/// `rmatrix await-server`: read an `AwaitSpec` from `input`, wait until the server answers,
/// read it back, and print its `ServerFacts` as one JSON line.
pub(crate) async fn await_server(input: &str) -> Result<()> {
    let spec: AwaitSpec = serde_json::from_str(input).context("not a server spec")?;
    let loaded = crate::matrix::load_for_client(&spec.matrix)?;
    let m = &loaded.matrix;
    let (server, config) = match (m.servers.get(&spec.server), m.configs.get(&spec.config)) {
        (Some(s), Some(c)) => (s, c),
        _ => bail!(
            "the matrix has no deployment {}/{}",
            spec.server,
            spec.config
        ),
    };
    let family = server.kind().family();
    let endpoint = Endpoint {
        host: spec.host,
        port: spec.port,
        user: spec.user,
        password: spec.password,
    };
    let timeout = Duration::from_secs(spec.timeout_s);
    // The orchestrator watches the server container; here only the answer counts.
    family::wait_ready(family, &endpoint, timeout, || async { Ok(None) }).await?;
    let d = family::read_back_and_inspect(family, endpoint, config, spec.pid).await?;
    let facts = ServerFacts {
        version: d.version,
        variables: d.variables,
        checks: d.checks,
    };
    println!("{}", serde_json::to_string(&facts)?);
    Ok(())
}

/// `rmatrix engine-port`: print a port nobody listens on now, as JSON (`{"port": N}`).
pub(crate) fn engine_port() -> Result<()> {
    println!("{{\"port\": {}}}", family::free_port()?);
    Ok(())
}

/// The engine-host side of one deployment: its port picked, its server awaited and read
/// back by client containers on the server's own engine, for an engine whose host this
/// process cannot reach at 127.0.0.1.
pub(crate) struct OnEngineHost<'a> {
    pub(crate) engine: &'a Engine,
    /// The client image on `engine`.
    pub(crate) image: String,
    pub(crate) matrix: &'a str,
    pub(crate) server: &'a str,
    pub(crate) config: &'a str,
    pub(crate) run_id: &'a str,
    pub(crate) instance: &'a str,
    pub(crate) start_timeout: Duration,
}

impl OnEngineHost<'_> {
    fn remote(&self, what: &str, limit: Duration) -> Remote<'_> {
        Remote::new(
            self.engine,
            &self.image,
            self.run_id,
            self.instance,
            what,
            limit,
        )
    }
}

impl HostSide for OnEngineHost<'_> {
    fn free_port(&self) -> BoxFuture<'_, Result<u16>> {
        Box::pin(async move {
            #[derive(Deserialize)]
            struct Port {
                port: u16,
            }
            let r = self.remote("port", Duration::from_secs(120));
            let line = run_json(&r, "engine-port", Vec::new(), None).await?;
            let p: Port = serde_json::from_str(&line).context("unreadable port")?;
            Ok(p.port)
        })
    }

    fn await_ready<'a>(
        &'a self,
        container: &'a str,
        endpoint: &'a Endpoint,
        pid: Option<u32>,
    ) -> BoxFuture<'a, Result<Deployed>> {
        Box::pin(async move {
            let spec = AwaitSpec {
                matrix: self.matrix.to_string(),
                server: self.server.to_string(),
                config: self.config.to_string(),
                host: endpoint.host.clone(),
                port: endpoint.port,
                user: endpoint.user.clone(),
                password: endpoint.password.clone(),
                pid,
                timeout_s: self.start_timeout.as_secs(),
            };
            let r = self.remote("await", self.start_timeout + Duration::from_secs(60));
            let line = run_json(
                &r,
                "await-server",
                serde_json::to_vec(&spec)?,
                Some(container),
            )
            .await?;
            let facts: ServerFacts =
                serde_json::from_str(&line).context("unreadable server facts")?;
            Ok(Deployed {
                endpoint: endpoint.clone(),
                container: None,
                version: facts.version,
                variables: facts.variables,
                checks: facts.checks,
                socket: None,
                // The server's cgroup is on the engine's host: its client containers read it.
                cgroup: None,
                counters: Default::default(),
                pid: None,
                data_volume: None,
                dumps: None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_output_survives_its_trip_through_json() {
        let out = CellOutput {
            counted_functions: None,
            profile: Some("mariadbd;do_command 3\n".into()),
            loaded: Some(crate::measure::measurement::Loaded {
                rows: 40_000,
                seconds: 0.5,
            }),
            server_seconds: vec![crate::measure::server_seconds::ServerSecond {
                phase: crate::measure::server_seconds::Phase::Measured,
                second: 1,
                span_s: 0.5,
                values: vec![(
                    "Com_insert".into(),
                    crate::measure::server_seconds::Kind::Count,
                    7,
                )],
            }],
            row: ResultRow {
                server: "db".into(),
                qps: Some(1234.5),
                docker_engine: "e2".into(),
                ..ResultRow::default()
            },
            counters: BTreeMap::from([("Com_insert".into(), 10)]),
            samples: vec![Sample {
                second: 1,
                threads: 4,
                tps: 0.0,
                qps: 1234.5,
                reads_ps: 1234.5,
                writes_ps: 0.0,
                others_ps: 0.0,
                lat_pct_ms: 0.25,
                lat_p99_ms: Some(0.5),
                errors_ps: 0.0,
                reconnects_ps: 0.0,
                target_ps: Some(1000.0),
                client_busy_pct: None,
            }],
            warmup_samples: Vec::new(),
            operations: vec![Operation {
                group: "insert".into(),
                name: "insert_1".into(),
                loops: 10,
                statements: 10,
                seconds: 0.5,
                server: BTreeMap::from([("Questions".into(), 10)]),
                latency: None,
                errors: None,
            }],
        };
        let back: CellOutput = serde_json::from_str(&serde_json::to_string(&out).unwrap()).unwrap();
        assert_eq!(back.row, out.row);
        assert_eq!(back.samples, out.samples);
        assert_eq!(back.operations, out.operations);
        assert_eq!(back.counters, out.counters);
        assert_eq!(back.server_seconds, out.server_seconds);
        assert_eq!(back.loaded, out.loaded);
    }

    #[tokio::test]
    async fn a_bad_cell_spec_is_an_error_not_a_panic() {
        let e = drive_cell("{}").await.unwrap_err();
        assert!(format!("{e:#}").contains("not a cell spec"), "{e:#}");
        let spec = CellSpec {
            matrix: "servers: {db: {image: 'mariadb:11'}}\nengines: [InnoDB]\nworkloads: {w: {slap: {}}}\nlength: 10\n".into(),
            cell: "nope".into(),
            iteration: 1,
            run_seed: 0,
            host: "127.0.0.1".into(),
            port: 1,
            user: "u".into(),
            password: String::new(),
            version: String::new(),
            variables: BTreeMap::new(),
            server_pid: None,
        };
        let e = drive_cell(&serde_json::to_string(&spec).unwrap())
            .await
            .unwrap_err();
        assert!(format!("{e:#}").contains("has no cell nope"), "{e:#}");
    }
}
