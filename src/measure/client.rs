//! How much CPU the client (this process) wanted over a measured phase, against the cores it
//! may use: a client that ran out of CPU reports its own limit as the server's throughput.
//! Wanted is the time its threads ran plus the time they waited runnable for a core (the
//! kernel's per-thread schedstat), so a client starved by a process sharing its core counts
//! as busy too, though it ran only half the time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Share of its cores above which a cell's client is called client-bound: Locust warns at
/// 90% CPU.
pub(crate) const BOUND_PCT: f64 = 90.0;

/// The client's threads' scheduler times at one moment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snapshot {
    at: Instant,
    run_ns: u64,
    wait_ns: u64,
}

/// What the client wanted over a phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Demand {
    /// Run plus runnable-wait time, as a share of the phase's wall time on `cores` cores.
    pub(crate) busy_pct: f64,
    /// The cores the client may use: its CPU affinity, capped by its cgroup's quota.
    pub(crate) cores: f64,
}

impl Snapshot {
    /// This process now; None where the kernel keeps no schedstat. The run time is the
    /// process's own CPU time, which keeps what threads that already ended used (the slap
    /// and oltp drivers' clients are threads of one iteration); the wait is of the threads
    /// alive now.
    pub(crate) fn now() -> Option<Snapshot> {
        let tasks = std::fs::read_dir("/proc/self/task").ok()?.flatten();
        let mut s = Snapshot::of(tasks.map(|t| t.path()))?;
        if let Some(cpu) = super::cpu::process_seconds() {
            s.run_ns = (cpu * 1e9) as u64;
        }
        Some(s)
    }

    /// The threads whose `/proc` directories are `tasks`, now.
    fn of(tasks: impl Iterator<Item = PathBuf>) -> Option<Snapshot> {
        let mut s = Snapshot {
            at: Instant::now(),
            run_ns: 0,
            wait_ns: 0,
        };
        let mut any = false;
        for task in tasks {
            let Ok(text) = std::fs::read_to_string(task.join("schedstat")) else {
                continue; // the thread ended meanwhile
            };
            if let Some((run, wait)) = parse_schedstat(&text) {
                (s.run_ns, s.wait_ns, any) = (s.run_ns + run, s.wait_ns + wait, true);
            }
        }
        any.then_some(s)
    }

    /// What the client wanted from `self` to `end`, on `cores` cores. The waits of threads
    /// that ended in between are left out.
    pub(crate) fn demand(&self, end: &Snapshot, cores: f64) -> Option<Demand> {
        let wall = end.at.duration_since(self.at).as_secs_f64();
        if wall <= 0.0 || cores <= 0.0 {
            return None;
        }
        let used = (end.run_ns.saturating_sub(self.run_ns)
            + end.wait_ns.saturating_sub(self.wait_ns)) as f64
            / 1e9;
        Some(Demand {
            busy_pct: used / (wall * cores) * 100.0,
            cores,
        })
    }
}

/// The client's snapshots once a second from a phase's start, taken by a thread of its own
/// until `stop`: each second's demand beside the client's per-second samples.
pub(crate) struct PerSecond {
    start: Snapshot,
    shared: Arc<(AtomicBool, Mutex<Vec<Snapshot>>)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PerSecond {
    /// Snapshots of this process at `start` + 1 s, + 2 s, ... until stopped.
    pub(crate) fn start(start: Snapshot) -> PerSecond {
        PerSecond::start_with(start, Snapshot::now)
    }

    /// The same with snapshots taken by `take`.
    fn start_with(
        start: Snapshot,
        take: impl Fn() -> Option<Snapshot> + Send + 'static,
    ) -> PerSecond {
        let shared = Arc::new((AtomicBool::new(false), Mutex::new(Vec::new())));
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("client-seconds".into())
            .spawn(move || {
                for k in 1u32.. {
                    let due = start.at + Duration::from_secs(k.into());
                    // Parked until the second is due or `stop` wakes it.
                    while !theirs.0.load(Ordering::Acquire) && Instant::now() < due {
                        std::thread::park_timeout(due.saturating_duration_since(Instant::now()));
                    }
                    if theirs.0.load(Ordering::Acquire) {
                        return;
                    }
                    if let Some(now) = take() {
                        theirs.1.lock().unwrap_or_else(|e| e.into_inner()).push(now);
                    }
                }
            })
            .ok();
        PerSecond {
            start,
            shared,
            thread,
        }
    }

    /// Stop at `end` (the phase's closing snapshot), and each complete second's busy
    /// percent on `cores` cores, the first second first. A second whose snapshot the thread
    /// had not taken yet when the phase closed past it (a starved client's sampler is starved
    /// too) ends at `end`.
    pub(crate) fn stop(mut self, cores: f64, end: Option<Snapshot>) -> Vec<f64> {
        self.shared.0.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        let mut snaps = self.shared.1.lock().unwrap_or_else(|e| e.into_inner());
        let next = self.start.at + Duration::from_secs(snaps.len() as u64 + 1);
        if let Some(end) = end.filter(|e| e.at >= next) {
            snaps.push(end);
        }
        std::iter::once(&self.start)
            .chain(snaps.iter())
            .zip(snaps.iter())
            .map_while(|(a, b)| a.demand(b, cores).map(|d| d.busy_pct))
            .collect()
    }
}

/// A thread's `schedstat`: nanoseconds on a CPU, nanoseconds runnable waiting for one.
fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The CPUs of this process's affinity mask (`Cpus_allowed_list`), in order.
pub(crate) fn allowed_cpus() -> Option<Vec<u32>> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    crate::input::untrusted::cpus_of(list.trim()).ok()
}

/// The cores this process may use: the CPUs of its affinity mask, capped by the CPU quota
/// of its cgroup and the cgroups above it.
pub(crate) fn allowed_cores() -> Option<f64> {
    let affinity = allowed_cpus().filter(|c| !c.is_empty())?.len() as f64;
    let quota = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|c| quota_cores(&c, Path::new("/sys/fs/cgroup")));
    Some(quota.map_or(affinity, |q| q.min(affinity)))
}

/// Reads one cgroup directory's CPU quota, in cores.
type ReadQuota = fn(&Path) -> Option<f64>;

/// The smallest CPU quota, in cores, on the way from this process's cgroup (in
/// `/proc/self/cgroup`'s text) up to the hierarchy's root under `root`: cgroup v1's `cpu`
/// controller (`cpu.cfs_quota_us` over `cpu.cfs_period_us`) where it is mounted, else v2's
/// `cpu.max`; None without one.
fn quota_cores(cgroup: &str, root: &Path) -> Option<f64> {
    let v1 = cgroup.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers.split(',').any(|c| c == "cpu").then_some(path)
    });
    let (base, rel, read): (PathBuf, &str, ReadQuota) =
        match v1.filter(|_| root.join("cpu").is_dir()) {
            Some(path) => (root.join("cpu"), path, read_v1),
            None => (
                root.to_path_buf(),
                cgroup.lines().find_map(|l| l.strip_prefix("0::"))?,
                read_v2,
            ),
        };
    let mut dir = base.join(rel.trim_start_matches('/'));
    let mut best: Option<f64> = None;
    while dir.starts_with(&base) {
        if let Some(q) = read(&dir) {
            best = Some(best.map_or(q, |b| b.min(q)));
        }
        if !dir.pop() {
            break;
        }
    }
    best
}

/// cgroup v2's `cpu.max` (`max 100000` or `QUOTA PERIOD`) in cores; None when unlimited.
fn read_v2(dir: &Path) -> Option<f64> {
    parse_cpu_max(&std::fs::read_to_string(dir.join("cpu.max")).ok()?)
}

/// cgroup v1's quota (`-1`: unlimited) over its period, in cores.
fn read_v1(dir: &Path) -> Option<f64> {
    let num = |f: &str| -> Option<f64> {
        std::fs::read_to_string(dir.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (quota, period) = (num("cpu.cfs_quota_us")?, num("cpu.cfs_period_us")?);
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut f = text.split_whitespace();
    let quota: f64 = f.next()?.parse().ok()?;
    let period: f64 = f.next()?.parse().ok()?;
    (period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_files() {
        assert_eq!(parse_schedstat("1500 250 7\n"), Some((1500, 250)));
        assert_eq!(parse_schedstat("x"), None);
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("150000 100000\n"), Some(1.5));
    }

    #[test]
    fn the_quota_of_a_cgroup_or_one_above_it_caps_the_cores() {
        let root = tempfile::tempdir().unwrap();
        let leaf = root.path().join("a/b");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(leaf.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(quota_cores("0::/a/b\n", root.path()), None);
        std::fs::write(root.path().join("a/cpu.max"), "50000 100000\n").unwrap();
        assert_eq!(quota_cores("0::/a/b\n", root.path()), Some(0.5));
        assert_eq!(quota_cores("1:cpu:/x\n", root.path()), None);
        // cgroup v1's cpu controller, where it is mounted, wins.
        let v1 = root.path().join("cpu/c");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("cpu.cfs_quota_us"), "20000\n").unwrap();
        std::fs::write(v1.join("cpu.cfs_period_us"), "100000\n").unwrap();
        std::fs::write(root.path().join("cpu/cpu.cfs_quota_us"), "-1\n").unwrap();
        std::fs::write(root.path().join("cpu/cpu.cfs_period_us"), "100000\n").unwrap();
        assert_eq!(
            quota_cores("2:cpu,cpuacct:/c\n0::/a/b\n", root.path()),
            Some(0.2)
        );
    }

    /// Snapshots of the calling thread only (the test runner's other threads run other
    /// tests), from any thread.
    fn this_thread() -> impl Fn() -> Option<Snapshot> + Send + 'static {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        move || {
            Snapshot::of(std::iter::once(PathBuf::from(format!(
                "/proc/self/task/{tid}"
            ))))
        }
    }

    #[test]
    fn a_spinning_thread_is_a_busy_client() {
        let cores = allowed_cores().unwrap();
        assert!(cores >= 1.0, "{cores}");
        let me = this_thread();
        let a = me().unwrap();
        let t = Instant::now();
        while t.elapsed().as_millis() < 200 {
            std::hint::spin_loop();
        }
        // Running or waiting for a core all along: its waits end before it reads its own.
        let d = a.demand(&me().unwrap(), 1.0).unwrap();
        assert!(d.busy_pct > 90.0, "{d:?}");
    }

    #[test]
    fn each_second_of_a_phase_has_its_demand() {
        let me = this_thread();
        let per = PerSecond::start_with(me().unwrap(), this_thread());
        let t = Instant::now();
        // About one second idle, then a little over one second spinning.
        std::thread::sleep(Duration::from_millis(1000));
        while t.elapsed().as_millis() < 2300 {
            std::hint::spin_loop();
        }
        let s = per.stop(1.0, None);
        assert_eq!(s.len(), 2, "{s:?}");
        // The second one's last wait for a core may still be open when it is read.
        assert!(s[0] < 10.0 && s[1] > 60.0, "{s:?}");
        // Stopped before its first second: no complete second.
        assert!(PerSecond::start(Snapshot::now().unwrap())
            .stop(1.0, Snapshot::now())
            .is_empty());
    }
}
