//! Counted instructions over a measured phase: the server runs under callgrind with its
//! instrumentation off (the counted image of `servers`); the phase's opening edge
//! turns it on and zeroes the counts, the closing edge dumps them and turns it off. The
//! commands reach callgrind through `vgdb`, run in the container's mount and process
//! namespaces (`nsenter`), and the dump lands in a folder of the deployment's directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::callgrind;

/// The dumps' file names: `callgrind.out.<pid>.<part>`.
pub(crate) const DUMP_PREFIX: &str = "callgrind.out.";
/// callgrind's and vgdb's pipes, in the container's own /tmp.
pub(crate) const VGDB_PREFIX: &str = "/tmp/rmatrix-vgdb";

/// What a window counts: the server's process, where its dumps land, and the functions
/// whose instructions are the server's timer work, not the operations'.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The server's main process on this host.
    pub(crate) pid: u32,
    /// The deployment's folder the container writes its dumps to.
    pub(crate) dumps: PathBuf,
    pub(crate) timer_roots: &'static [&'static str],
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

    /// The measured phase opens: instrumentation on, counts zeroed.
    pub(crate) fn open(&mut self) {
        let Some(plan) = &self.plan else { return };
        match vgdb(plan.pid, &["instrumentation", "on", "-c", "zero"]) {
            Ok(()) => self.counting = true,
            Err(e) => self.counted = Some(Err(format!("{e:#}"))),
        }
    }

    /// The measured phase closed: the counts dumped, instrumentation off, the dump read.
    pub(crate) fn close(&mut self) {
        let Some(plan) = &self.plan else { return };
        if !std::mem::take(&mut self.counting) {
            return;
        }
        let before = newest_dump(&plan.dumps).ok().flatten();
        let read = vgdb(plan.pid, &["dump", "-c", "instrumentation", "off"])
            .and_then(|()| read_new_dump(&plan.dumps, before.as_ref().map(|d| d.1)))
            .map(|dump| Instructions {
                total: dump.total,
                timer: dump.under(plan.timer_roots),
                functions: functions(&dump),
            });
        self.counted = Some(read.map_err(|e| format!("{e:#}")));
    }

    /// The phase's counts, or why there are none; None when it was not counted.
    pub(crate) fn take(&mut self) -> Option<Result<Instructions, String>> {
        self.counted.take()
    }
}

/// Send callgrind one or more monitor commands (`-c` between them) through `vgdb`, in the
/// server's namespaces. Its environment is emptied: vgdb finds callgrind's pipes by the
/// user and host names in the environment, which the server's image runs without too.
fn vgdb(pid: u32, command: &[&str]) -> Result<()> {
    let in_container = namespace_pid(pid)?;
    // As the server's own user: a server that dropped root (MariaDB's `--user=mysql`) owns
    // callgrind's pipes, and a root vgdb's ptrace of it left commands unanswered.
    let (uid, gid) = owner(pid)?;
    let mut child = Command::new("nsenter")
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
        .context("failed to run nsenter (util-linux) for vgdb")?;
    let give_up = Instant::now() + Duration::from_secs(30);
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

/// The dump with the highest part number in `dir` (`<prefix>.<pid>.<part>`), if any.
fn newest_dump(dir: &Path) -> Result<Option<(PathBuf, u64)>> {
    let mut newest: Option<(PathBuf, u64)> = None;
    for entry in std::fs::read_dir(dir).with_context(|| format!("no {}", dir.display()))? {
        let name = entry?.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(DUMP_PREFIX)) else {
            continue;
        };
        let part = rest
            .rsplit_once('.')
            .and_then(|(_, p)| p.parse::<u64>().ok());
        if let Some(part) = part.filter(|p| newest.as_ref().is_none_or(|n| *p > n.1)) {
            newest = Some((dir.join(&name), part));
        }
    }
    Ok(newest)
}

/// The dump written after part `before`: callgrind has written it when vgdb returns.
fn read_new_dump(dir: &Path, before: Option<u64>) -> Result<callgrind::Dump> {
    let Some((path, part)) = newest_dump(dir)? else {
        bail!("callgrind wrote no dump to {}", dir.display())
    };
    if before.is_some_and(|b| part <= b) {
        bail!("callgrind wrote no new dump to {}", dir.display());
    }
    // The container can write that folder: the file is read without following a link, and
    // only up to a bound.
    let bytes = crate::input::file::read(&path, crate::input::file::CALLGRIND)?;
    let _ = std::fs::remove_file(&path);
    callgrind::parse(&String::from_utf8_lossy(&bytes))
        .with_context(|| format!("failed to read {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_dump_is_the_highest_part() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "callgrind.out.1",
            "callgrind.out.1.2",
            "callgrind.out.1.10",
            "other.3",
        ] {
            std::fs::write(tmp.path().join(name), "").unwrap();
        }
        let (path, part) = newest_dump(tmp.path()).unwrap().unwrap();
        assert_eq!(part, 10);
        assert!(path.ends_with("callgrind.out.1.10"));
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
