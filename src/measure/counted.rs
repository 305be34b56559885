//! Counted instructions over a measured phase, by callgrind or by the CPU's counter
//! (`perf_count`). Under callgrind the server runs with its
//! instrumentation off (the counted image of `servers`); the phase's opening edge
//! turns it on and zeroes the counts, the closing edge dumps them and turns it off. The
//! commands reach callgrind through `vgdb`, run in the container's mount and process
//! namespaces (`nsenter`), and the dumps land in a folder of the deployment's directory.
//!
//! A server that forks a process per connection (PostgreSQL, each child under its own
//! callgrind) is every process under the main one: each gets the commands, at once, and
//! the phase's count is the sum of their dumps. Any other server is its main process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{callgrind, perf_count};

/// The dumps' file names: `callgrind.out.<pid>.<part>`.
pub(crate) const DUMP_PREFIX: &str = "callgrind.out.";
/// callgrind's and vgdb's pipes, in the container's own /tmp.
pub(crate) const VGDB_PREFIX: &str = "/tmp/rmatrix-vgdb";

/// What a window counts: the server's processes, and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The server's main process on this host.
    pub(crate) pid: u32,
    /// The server works in processes its main one forks (PostgreSQL's postmaster only
    /// listens and forks): only those are counted. The main process is the container's
    /// first, and vgdb cannot stop that one to reach a callgrind blocked in a system call
    /// (a namespace's first process ignores the stop signal ptrace sends from inside).
    pub(crate) forked: bool,
    pub(crate) by: By,
}

/// What counts the instructions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum By {
    /// The server runs under callgrind: its dumps land in the deployment's folder `dumps`;
    /// the functions `timer_roots` are its timer work, not the operations'.
    Callgrind {
        dumps: PathBuf,
        timer_roots: &'static [&'static str],
    },
    /// The CPU's instruction counter, through `perf stat` (no timer work set apart).
    Perf,
}

/// One measured phase's counts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instructions {
    /// Every instruction the server executed between the edges (all its threads).
    pub(crate) total: u64,
    /// Those under the family's timer roots (e.g. Redis's `serverCron`): time-driven, so
    /// their count follows how long the phase took, not what it did.
    pub(crate) timer: u64,
    /// The functions that ran, most inclusive instructions first (at most
    /// [`MAX_FUNCTIONS`]): what a differential profile of two builds reads.
    pub(crate) functions: Vec<Function>,
}

/// One function's instructions over a phase.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Function {
    pub(crate) name: String,
    /// In its own lines.
    pub(crate) own: u64,
    /// In its own lines and what it called.
    pub(crate) inclusive: u64,
}

/// The functions kept of a phase: a server's hot path is a few hundred.
pub(crate) const MAX_FUNCTIONS: usize = 2000;

/// The functions of `dump`, most inclusive first, at most [`MAX_FUNCTIONS`].
fn functions(dump: &callgrind::Dump) -> Vec<Function> {
    let mut all: Vec<Function> = (dump.inclusive.iter())
        .map(|(name, inclusive)| Function {
            name: name.clone(),
            own: dump.own.get(name).copied().unwrap_or(0),
            inclusive: *inclusive,
        })
        .collect();
    all.sort_by(|a, b| b.inclusive.cmp(&a.inclusive).then(a.name.cmp(&b.name)));
    all.truncate(MAX_FUNCTIONS);
    all
}

impl Instructions {
    /// The instructions the operations cost, each: the timer work set apart.
    pub(crate) fn per_op(&self, ops: u64) -> Option<f64> {
        (ops > 0).then(|| self.total.saturating_sub(self.timer) as f64 / ops as f64)
    }
}

/// A window's counting: planned, counting, counted, or why not.
#[derive(Debug, Default)]
pub(crate) struct Phase {
    plan: Option<Plan>,
    counting: bool,
    /// The perf stat counting the phase, and the folder its counts are written to.
    perf: Option<(perf_count::Counting, PathBuf)>,
    counted: Option<Result<Instructions, String>>,
}

impl Phase {
    /// What to count, or why nothing can be (said when the phase is taken).
    pub(crate) fn plan(&mut self, plan: Result<Plan, String>) {
        match plan {
            Ok(p) => self.plan = Some(p),
            Err(why) => self.counted = Some(Err(why)),
        }
    }

    /// The measured phase opens: counting starts in every process of the server.
    pub(crate) fn open(&mut self) {
        let Some(plan) = &self.plan else { return };
        let opened = match &plan.by {
            // Earlier dumps (written with instrumentation off, by processes that exited) go,
            // then in every process instrumentation on, counts zeroed.
            By::Callgrind { dumps, .. } => remove_dumps(dumps)
                .and_then(|()| each_process(plan, &["instrumentation", "on", "-c", "zero"])),
            By::Perf => start_perf(plan.pid).map(|p| self.perf = Some(p)),
        };
        match opened {
            Ok(()) => self.counting = true,
            Err(e) => self.counted = Some(Err(format!("{e:#}"))),
        }
    }

    /// The measured phase closed: the counts read. Under callgrind every process's counts
    /// dumped and instrumentation off, the dumps read and summed (with those of processes
    /// that exited within the phase).
    pub(crate) fn close(&mut self) {
        let Some(plan) = &self.plan else { return };
        if !std::mem::take(&mut self.counting) {
            return;
        }
        let read = match &plan.by {
            By::Callgrind { dumps, timer_roots } => {
                each_process(plan, &["dump", "-c", "instrumentation", "off"])
                    .and_then(|()| read_dumps(dumps))
                    .map(|dumps| Instructions {
                        total: dumps.iter().map(|d| d.total).sum(),
                        timer: dumps.iter().map(|d| d.under(timer_roots)).sum(),
                        functions: functions(&callgrind::Dump::sum(dumps)),
                    })
            }
            By::Perf => match self.perf.take() {
                Some((counting, dir)) => {
                    let total = counting.stop();
                    let _ = std::fs::remove_dir_all(dir);
                    total.map(|total| Instructions {
                        total,
                        timer: 0,
                        functions: Vec::new(),
                    })
                }
                None => Err(anyhow::anyhow!("perf stat was not started")),
            },
        };
        self.counted = Some(read.map_err(|e| format!("{e:#}")));
    }

    /// The phase's counts, or why there are none; None when it was not counted.
    pub(crate) fn take(&mut self) -> Option<Result<Instructions, String>> {
        self.counted.take()
    }
}

/// Send `command` to the callgrind of each of the plan's processes, all at once (a process
/// blocked in a system call answers only when vgdb forces it, after 100 ms: one after
/// another, the last would start its phase a second after the first). A process under the
/// main one that exits meanwhile has nothing to count; the main one must answer.
fn each_process(plan: &Plan, command: &[&str]) -> Result<()> {
    let main = plan.pid;
    // A server that does not fork for its clients is its main process (a child it forks
    // for a snapshot runs without pipes of its own).
    let pids = match plan.forked {
        true => tree(main).split_off(1),
        false => vec![main],
    };
    if pids.is_empty() {
        bail!("the server's process {main} has no child processes to count");
    }
    let mut sent = Vec::new();
    for pid in pids {
        match vgdb(pid, command) {
            Ok(child) => sent.push((pid, child)),
            Err(e) if pid == main => return Err(e),
            Err(_) => {}
        }
    }
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut first_error = None;
    for (pid, child) in sent {
        let answered = wait_for(child, command, give_up);
        let gone = pid != main && !Path::new(&format!("/proc/{pid}")).exists();
        if let (Err(e), false) = (answered, gone) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Start counting the instructions of `main` and every process under it, written to a
/// folder only this user can enter.
fn start_perf(main: u32) -> Result<(perf_count::Counting, PathBuf)> {
    let dir = super::profile::private_dir()?;
    let output = dir.join("counts");
    match perf_count::Counting::start(&tree(main), perf_count::INSTRUCTIONS, &output) {
        Ok(counting) => Ok((counting, dir)),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            Err(e)
        }
    }
}

/// `pid` and every process under it (children, theirs, ...), from /proc's parent ids.
fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) = parent_of(p) {
                parents.push((p, parent));
            }
        }
    }
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let of = all[i];
        all.extend(parents.iter().filter(|(_, pp)| *pp == of).map(|(p, _)| *p));
        i += 1;
    }
    all
}

/// A process's parent id: the field after the state in `/proc/PID/stat`, counted after
/// the command name's closing parenthesis (the name may hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Start sending callgrind one or more monitor commands (`-c` between them) through
/// `vgdb`, in the server's namespaces. Its environment is emptied: vgdb finds callgrind's
/// pipes by the user and host names in the environment, which the server's image runs
/// without too.
fn vgdb(pid: u32, command: &[&str]) -> Result<std::process::Child> {
    let in_container = namespace_pid(pid)?;
    // As the server's own user: a server that dropped root (MariaDB's `--user=mysql`) owns
    // callgrind's pipes, and a root vgdb's ptrace of it left commands unanswered.
    let (uid, gid) = owner(pid)?;
    Command::new("nsenter")
        .arg(format!("--target={pid}"))
        .args(["--mount", "--pid"])
        .arg(format!("--setuid={uid}"))
        .arg(format!("--setgid={gid}"))
        .args(["--", "vgdb"])
        .arg(format!("--vgdb-prefix={VGDB_PREFIX}"))
        .arg(format!("--pid={in_container}"))
        .args(command)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("failed to run nsenter (util-linux) for vgdb")
}

/// Wait for a vgdb started by [`vgdb`] until `give_up`: its failure with its last line.
fn wait_for(mut child: std::process::Child, command: &[&str], give_up: Instant) -> Result<()> {
    loop {
        if let Some(status) = child.try_wait()? {
            if status.success() {
                return Ok(());
            }
            let mut err = String::new();
            if let Some(e) = child.stderr.take() {
                use std::io::Read as _;
                let _ = e.take(64 * 1024).read_to_string(&mut err);
            }
            bail!(
                "vgdb `{}` failed ({status}): {}",
                command.join(" "),
                crate::escape::terminal(err.trim().lines().last().unwrap_or(""))
            );
        }
        if Instant::now() > give_up {
            let _ = child.kill();
            let _ = child.wait();
            bail!("vgdb `{}` did not answer within 30 s", command.join(" "));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The real user and group ids of a process (`Uid:` and `Gid:` of its status).
fn owner(pid: u32) -> Result<(u32, u32)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("the server's process {pid} is gone"))?;
    let id = |key: &str| {
        (status.lines())
            .find_map(|l| l.strip_prefix(key))
            .and_then(|ids| ids.split_whitespace().next())
            .and_then(|id| id.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no {key} for process {pid}"))
    };
    Ok((id("Uid:")?, id("Gid:")?))
}

/// The process's id in its own (the container's) namespace: the last of `NSpid`.
fn namespace_pid(pid: u32) -> Result<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("the server's process {pid} is gone"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .and_then(|ids| ids.split_whitespace().last())
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no NSpid for process {pid}"))
}

/// The dump files in `dir` (`callgrind.out.<pid>[.<part>]`).
fn dump_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("no {}", dir.display()))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(DUMP_PREFIX) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Remove the dumps in `dir`: outside a phase, instrumentation is off and they count nothing.
fn remove_dumps(dir: &Path) -> Result<()> {
    for file in dump_files(dir)? {
        let _ = std::fs::remove_file(file);
    }
    Ok(())
}

/// Read and remove the phase's dumps: callgrind has written them when vgdb returns, and a
/// process that exited within the phase wrote its own at its exit. An empty file is the
/// one callgrind makes at a process's start, to see that it can.
fn read_dumps(dir: &Path) -> Result<Vec<callgrind::Dump>> {
    let mut files = dump_files(dir)?;
    files.retain(|f| std::fs::symlink_metadata(f).is_ok_and(|m| m.len() > 0));
    if files.is_empty() {
        bail!("callgrind wrote no dump to {}", dir.display());
    }
    files
        .iter()
        .map(|path| {
            // The container can write that folder: the file is read without following a
            // link, and only up to a bound.
            let bytes = crate::input::file::read(path, crate::input::file::CALLGRIND)?;
            let _ = std::fs::remove_file(path);
            callgrind::parse(&String::from_utf8_lossy(&bytes))
                .with_context(|| format!("failed to read {}", path.display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dumps_are_every_callgrind_file_of_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "callgrind.out.1",
            "callgrind.out.1.2",
            "callgrind.out.7.1",
            "other.3",
        ] {
            std::fs::write(tmp.path().join(name), "").unwrap();
        }
        let files = dump_files(tmp.path()).unwrap();
        assert_eq!(files.len(), 3, "{files:?}");
        remove_dumps(tmp.path()).unwrap();
        assert!(dump_files(tmp.path()).unwrap().is_empty());
        assert!(tmp.path().join("other.3").exists());
    }

    #[test]
    fn a_process_tree_holds_its_children() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let me = std::process::id();
        let all = tree(me);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(all[0], me);
        assert!(all.contains(&child.id()), "{all:?}");
    }

    #[test]
    fn timer_work_is_set_apart_per_operation() {
        let i = Instructions {
            total: 1_000_000,
            timer: 20_000,
            functions: Vec::new(),
        };
        assert_eq!(i.per_op(1000), Some(980.0));
        assert_eq!(i.per_op(0), None);
    }

    #[test]
    fn this_process_has_a_namespace_pid_and_an_owner() {
        assert!(namespace_pid(std::process::id()).unwrap() > 0);
        let (uid, _) = owner(std::process::id()).unwrap();
        assert_eq!(uid, uid_of_this_process());
    }

    /// This process's uid, from the environment of the test run's `id -u`.
    fn uid_of_this_process() -> u32 {
        let out = Command::new("id").arg("-u").output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}
