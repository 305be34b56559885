//! What a server's container used, from its cgroup (v1 or v2, found through its main
//! process): CPU time, bytes read and written by its block I/O, and the context switches of
//! its threads. Read at both edges of a measured phase, the difference is the server's cost
//! of the operations in between.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::client;
use super::server_seconds::{CounterSlot, Phase, Sampler, ServerSecond};

/// Counters of a cgroup, cumulative since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub cpu_ns: u64,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    /// Voluntary and involuntary context switches of the threads alive when read (a thread
    /// that ended in between takes its count with it).
    pub(crate) ctx_switches: Option<u64>,
}

impl Usage {
    pub(crate) fn since(&self, before: &Usage) -> Usage {
        Usage {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            ctx_switches: self
                .ctx_switches
                .zip(before.ctx_switches)
                .map(|(a, b)| a.saturating_sub(b)),
        }
    }
}

/// Where one process's cgroup counters are.
#[derive(Debug, Clone, PartialEq)]
pub enum Cgroup {
    /// cgroup v2: one directory with `cpu.stat` and `io.stat`.
    V2(PathBuf),
    /// cgroup v1: the `cpuacct` and `blkio` hierarchies' directories.
    V1 { cpuacct: PathBuf, blkio: PathBuf },
}

impl Cgroup {
    /// The cgroup of process `pid` (as this host sees it); None when it cannot be read.
    pub(crate) fn of_pid(pid: u32) -> Option<Cgroup> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let cg = Cgroup::parse(&text, Path::new("/sys/fs/cgroup"))?;
        cg.read().map(|_| cg)
    }

    /// From `/proc/<pid>/cgroup`: v1 when it names a cpuacct hierarchy, else v2's `0::`.
    fn parse(text: &str, root: &Path) -> Option<Cgroup> {
        let mut v1 = (None, None);
        let mut v2 = None;
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let path = path.trim_start_matches('/');
            let list: Vec<&str> = controllers.split(',').collect();
            if list.contains(&"cpuacct") {
                v1.0 = Some(root.join(controllers).join(path));
            }
            if list.contains(&"blkio") {
                v1.1 = Some(root.join(controllers).join(path));
            }
            if controllers.is_empty() {
                v2 = Some(root.join(path));
            }
        }
        match v1 {
            (Some(cpuacct), Some(blkio)) => Some(Cgroup::V1 { cpuacct, blkio }),
            _ => v2.map(Cgroup::V2),
        }
    }

    /// The counters now; None when the cgroup is gone or unreadable.
    pub(crate) fn read(&self) -> Option<Usage> {
        match self {
            Cgroup::V2(dir) => {
                let cpu = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
                let cpu_us = field(&cpu, "usage_usec")?;
                let io = std::fs::read_to_string(dir.join("io.stat")).unwrap_or_default();
                let (read_bytes, write_bytes) = io_stat(&io);
                Some(Usage {
                    cpu_ns: cpu_us * 1000,
                    read_bytes,
                    write_bytes,
                    ctx_switches: ctx_switches(dir),
                })
            }
            Cgroup::V1 { cpuacct, blkio } => {
                let cpu = std::fs::read_to_string(cpuacct.join("cpuacct.usage")).ok()?;
                let io = std::fs::read_to_string(blkio.join("blkio.throttle.io_service_bytes"))
                    .unwrap_or_default();
                let (read_bytes, write_bytes) = blkio_bytes(&io);
                Some(Usage {
                    cpu_ns: cpu.trim().parse().ok()?,
                    read_bytes,
                    write_bytes,
                    ctx_switches: ctx_switches(cpuacct),
                })
            }
        }
    }
}

/// The context switches of every thread of every process in the cgroup, from
/// `/proc/<pid>/task/<tid>/status`; None when the process list cannot be read.
fn ctx_switches(dir: &Path) -> Option<u64> {
    let procs = std::fs::read_to_string(dir.join("cgroup.procs")).ok()?;
    let mut total = 0;
    for pid in procs.split_whitespace() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue; // ended since the list was read
        };
        for t in tasks.flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            total += switches(&status);
        }
    }
    Some(total)
}

/// `voluntary_ctxt_switches:` plus `nonvoluntary_ctxt_switches:` of a status file.
fn switches(status: &str) -> u64 {
    status
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| *k == "voluntary_ctxt_switches" || *k == "nonvoluntary_ctxt_switches")
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// `name value` lines (cpu.stat).
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// io.stat: `8:0 rbytes=N wbytes=N rios=N ...` per device, summed.
fn io_stat(text: &str) -> (u64, u64) {
    let mut out = (0, 0);
    for kv in text.split_whitespace().filter_map(|w| w.split_once('=')) {
        match kv {
            ("rbytes", v) => out.0 += v.parse().unwrap_or(0),
            ("wbytes", v) => out.1 += v.parse().unwrap_or(0),
            _ => {}
        }
    }
    out
}

/// blkio.throttle.io_service_bytes: `8:0 Read N` / `8:0 Write N` per device, summed (the
/// `Total` lines left out).
fn blkio_bytes(text: &str) -> (u64, u64) {
    let mut out = (0, 0);
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let [_, op, n] = w[..] {
            match op {
                "Read" => out.0 += n.parse().unwrap_or(0),
                "Write" => out.1 += n.parse().unwrap_or(0),
                _ => {}
            }
        }
    }
    out
}

/// The edges of one measured phase: a driver opens it right before its clients start and
/// closes it right after they end; what the server's cgroup used in between is its cost,
/// and what this process's threads wanted the client's (`client`).
#[derive(Debug, Default)]
pub struct Window {
    cgroup: Option<Cgroup>,
    start: Mutex<Option<Usage>>,
    end: Mutex<Option<Usage>>,
    client: Mutex<ClientPhase>,
    counters: CounterSlot,
    server: Mutex<ServerPhase>,
    profile: Mutex<super::profile::Phase>,
    counted: Mutex<super::counted::Phase>,
}

/// The server's side: its counters once a second (`server_seconds`), in the warm-up and
/// the measured phase.
#[derive(Default)]
struct ServerPhase {
    running: Option<Sampler>,
    seconds: Vec<ServerSecond>,
    /// Reads sent between the measured phase's edges.
    measured_reads: u64,
}

impl std::fmt::Debug for ServerPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPhase")
            .field("seconds", &self.seconds.len())
            .field("measured_reads", &self.measured_reads)
            .finish_non_exhaustive()
    }
}

/// The client's side of a window: its snapshots at the edges and once a second between.
#[derive(Default)]
struct ClientPhase {
    start: Option<client::Snapshot>,
    end: Option<client::Snapshot>,
    sampler: Option<client::PerSecond>,
    seconds: Vec<f64>,
}

impl std::fmt::Debug for ClientPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientPhase")
            .field("seconds", &self.seconds)
            .finish_non_exhaustive()
    }
}

impl Window {
    /// A window on `cgroup`; without one (an external server) it measures nothing.
    pub fn new(cgroup: Option<Cgroup>) -> Window {
        Window {
            cgroup,
            ..Window::default()
        }
    }

    /// Read the server's counters once a second on the deployment's counter connection
    /// (`slot`), from each phase's opening edge to its closing one.
    pub(crate) fn with_counters(mut self, slot: CounterSlot) -> Window {
        self.counters = slot;
        self
    }

    /// Profile the server's process `pid` at `hz` over the measured phase (`profile`).
    pub(crate) fn with_profile(self, pid: u32, hz: u32) -> Window {
        self.lock_profile().plan = Some(super::profile::Plan { pid, hz });
        self
    }

    /// Count the server's instructions over the measured phase (`counted`), or say why
    /// they cannot be (the iteration then fails).
    pub(crate) fn with_counted(self, plan: Result<super::counted::Plan, String>) -> Window {
        self.lock_counted().plan(plan);
        self
    }

    fn lock_counted(&self) -> std::sync::MutexGuard<'_, super::counted::Phase> {
        self.counted.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The measured phase's instructions once closed, or why it has none; None when not
    /// counted.
    pub(crate) fn take_counted(&self) -> Option<Result<super::counted::Instructions, String>> {
        self.lock_counted().take()
    }

    fn lock_profile(&self) -> std::sync::MutexGuard<'_, super::profile::Phase> {
        self.profile.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The measured phase's recording, once closed: its file and the folder to remove.
    pub(crate) fn take_profile(&self) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        self.lock_profile().take()
    }

    /// The warm-up begins: its server seconds are kept apart from the measured phase's.
    pub(crate) fn warmup_open(&self) {
        self.begin(Phase::Warmup);
    }

    pub(crate) fn warmup_close(&self) {
        self.end();
    }

    fn begin(&self, phase: Phase) {
        self.end();
        let mut s = self.server.lock().unwrap_or_else(|e| e.into_inner());
        match Sampler::start(phase, &self.counters, self.cgroup.clone()) {
            Ok(sampler) => s.running = Some(sampler),
            Err(reads) if phase == Phase::Measured => s.measured_reads = reads,
            Err(_) => {}
        }
    }

    /// Stop the phase's sampler, if one runs; the measured phase's reads are counted.
    fn end(&self) {
        let mut s = self.server.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sampler) = s.running.take() {
            let measured = sampler.phase() == Phase::Measured;
            let (seconds, reads) = sampler.stop();
            s.seconds.extend(seconds);
            if measured {
                s.measured_reads = reads;
            }
        }
    }

    /// The reads of the server's counters sent between the measured phase's edges: each
    /// counted in the counters `server_seconds::Rules::own_cost` names.
    pub(crate) fn server_reads(&self) -> u64 {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .measured_reads
    }

    /// The server's seconds of the warm-up and the measured phase, taken.
    pub(crate) fn take_server_seconds(&self) -> Vec<ServerSecond> {
        std::mem::take(
            &mut self
                .server
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .seconds,
        )
    }

    pub(crate) fn open(&self) {
        // The counters' opening read first: the cgroup's edge then leaves its cost out. The
        // profiler's start too (perf takes some milliseconds to attach).
        self.begin(Phase::Measured);
        self.lock_profile().open();
        // Last: the counts start at zero right before the clients do.
        self.lock_counted().open();
        let now = self.cgroup.as_ref().and_then(Cgroup::read);
        *self.start.lock().unwrap_or_else(|e| e.into_inner()) = now;
        let start = client::Snapshot::now();
        *self.client.lock().unwrap_or_else(|e| e.into_inner()) = ClientPhase {
            start,
            sampler: start.map(client::PerSecond::start),
            ..ClientPhase::default()
        };
    }

    pub(crate) fn close(&self) {
        // First: the counts end as the clients do.
        self.lock_counted().close();
        let now = self.cgroup.as_ref().and_then(Cgroup::read);
        *self.end.lock().unwrap_or_else(|e| e.into_inner()) = now;
        let mut c = self.client.lock().unwrap_or_else(|e| e.into_inner());
        c.end = client::Snapshot::now();
        if let (Some(sampler), Some(cores)) = (c.sampler.take(), client::allowed_cores()) {
            c.seconds = sampler.stop(cores, c.end);
        }
        drop(c);
        self.end();
        self.lock_profile().close();
    }

    /// What this process's threads wanted between `open` and `close`, against the cores
    /// it may use.
    pub(crate) fn client(&self) -> Option<client::Demand> {
        let c = self.client.lock().unwrap_or_else(|e| e.into_inner());
        c.start?.demand(&c.end?, client::allowed_cores()?)
    }

    /// The same for each complete second of the phase, in percent (see `client::Demand`).
    pub(crate) fn client_seconds(&self) -> Vec<f64> {
        (self
            .client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .seconds)
            .clone()
    }

    /// What the server used between `open` and `close`, when both were read.
    pub fn used(&self) -> Option<Usage> {
        let start = *self.start.lock().unwrap_or_else(|e| e.into_inner());
        let end = *self.end.lock().unwrap_or_else(|e| e.into_inner());
        Some(end?.since(&start?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_switches_of_a_status_file() {
        let status =
            "Name:\tmariadbd\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(switches(status), 127);
        assert_eq!(switches("Name: x\n"), 0);
        // This process's own cgroup lists it, and it has switched at least once.
        let me = Cgroup::of_pid(std::process::id());
        if let Some(u) = me.and_then(|c| c.read()) {
            assert!(u.ctx_switches.is_some_and(|n| n > 0), "{u:?}");
        }
    }

    #[test]
    fn finds_v1_and_v2_paths() {
        let v1 =
            "12:blkio:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n";
        assert_eq!(
            Cgroup::parse(v1, Path::new("/sys/fs/cgroup")),
            Some(Cgroup::V1 {
                cpuacct: "/sys/fs/cgroup/cpu,cpuacct/docker/abc".into(),
                blkio: "/sys/fs/cgroup/blkio/docker/abc".into(),
            })
        );
        let v2 = "0::/system.slice/docker-abc.scope\n";
        assert_eq!(
            Cgroup::parse(v2, Path::new("/sys/fs/cgroup")),
            Some(Cgroup::V2(
                "/sys/fs/cgroup/system.slice/docker-abc.scope".into()
            ))
        );
    }

    #[test]
    fn reads_the_counters_of_both_versions() {
        assert_eq!(
            field("usage_usec 1500\nuser_usec 1000\n", "usage_usec"),
            Some(1500)
        );
        assert_eq!(
            io_stat("8:0 rbytes=10 wbytes=20 rios=1 wios=2\n8:16 rbytes=1 wbytes=2\n"),
            (11, 22)
        );
        assert_eq!(
            blkio_bytes("8:0 Read 100\n8:0 Write 300\n8:0 Sync 5\n8:0 Total 400\nTotal 400\n"),
            (100, 300)
        );
        let a = Usage {
            cpu_ns: 5,
            read_bytes: 1,
            write_bytes: 9,
            ctx_switches: Some(4),
        };
        // A count unknown at either edge is unknown over the phase.
        assert_eq!(
            a.since(&Usage::default()),
            Usage {
                ctx_switches: None,
                ..a
            }
        );
        let before = Usage {
            ctx_switches: Some(1),
            ..Usage::default()
        };
        assert_eq!(a.since(&before).ctx_switches, Some(3));
        assert_eq!(
            Usage::default().since(&a),
            Usage::default(),
            "never negative"
        );
    }

    #[test]
    fn a_window_without_a_cgroup_measures_nothing() {
        let w = Window::new(None);
        w.open();
        w.close();
        assert_eq!(w.used(), None);
    }
}
