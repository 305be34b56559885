//! A CPU profile of the server over a measured phase: `perf record -e cpu-clock -g` on its
//! main process (every thread) from this host, `perf script` after the phase, folded into
//! one line per distinct stack (`inferno`'s collapse, the input of a flame graph). perf
//! finds the container's binaries through the process's `/proc/<pid>/root`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// The perf binary; said once per run when it cannot profile.
pub(crate) const PERF: &str = "perf";

/// Whether the "cannot profile" note was printed already (once per process).
static SAID: AtomicBool = AtomicBool::new(false);

/// Say why profiling is off, once.
pub(crate) fn say_once(why: &str) {
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("no server profiles: {why} (the run goes on without them)");
    }
}

/// A `perf record` running against one process.
pub(crate) struct Recording {
    child: Child,
    data: PathBuf,
}

impl Recording {
    /// Sample process `pid`'s threads at `hz` into `data` (a file of its own).
    pub(crate) fn start(pid: u32, hz: u32, data: &Path) -> Result<Recording> {
        let child = Command::new(PERF)
            .args(["record", "-e", "cpu-clock", "-g", "--quiet"])
            .arg(format!("-F{hz}"))
            .arg(format!("-p{pid}"))
            .arg("-o")
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("failed to start {PERF} record"))?;
        Ok(Recording {
            child,
            data: data.to_path_buf(),
        })
    }

    /// Stop the recording (SIGINT: perf writes its file and exits), up to 30 s.
    pub(crate) fn stop(mut self) -> Result<PathBuf> {
        // SAFETY: kill(2) on our own child's pid; it has not been waited for yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let give_up = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    use std::io::Read as _;
                    let _ = e.read_to_string(&mut err);
                }
                // perf exits with SIGINT's status when interrupted; a file is what counts.
                if !self.data.exists() {
                    bail!("perf record wrote nothing ({status}): {}", last_line(&err));
                }
                return Ok(self.data);
            }
            if std::time::Instant::now() > give_up {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("perf record did not stop within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A directory only this user can enter, for a recording's file (perf writes it as root, so
/// never to a name someone else could have put a link at).
pub(crate) fn private_dir() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let dir = std::env::temp_dir().join(format!(
        "rmatrix-perf-{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("failed to create {}", dir.display()))?;
    Ok(dir)
}

/// What a window profiles: the server's process, at this rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Plan {
    pub(crate) pid: u32,
    pub(crate) hz: u32,
}

/// A window's profile: planned, recording, recorded (the folder holding its file), or why
/// not.
#[derive(Default)]
pub(crate) struct Phase {
    pub(crate) plan: Option<Plan>,
    running: Option<(Recording, PathBuf)>,
    recorded: Option<(PathBuf, PathBuf)>,
}

impl Phase {
    /// Start recording (the measured phase opens); a failure is said once and the phase goes
    /// on unprofiled.
    pub(crate) fn open(&mut self) {
        let Some(plan) = self.plan else { return };
        let started = private_dir().and_then(|dir| {
            let data = dir.join("perf.data");
            match Recording::start(plan.pid, plan.hz, &data) {
                Ok(r) => Ok((r, dir)),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    Err(e)
                }
            }
        });
        match started {
            Ok(r) => self.running = Some(r),
            Err(e) => say_once(&format!("{e:#}")),
        }
    }

    /// Stop recording (the measured phase closed).
    pub(crate) fn close(&mut self) {
        if let Some((rec, dir)) = self.running.take() {
            match rec.stop() {
                Ok(data) => self.recorded = Some((data, dir)),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    say_once(&format!("{e:#}"));
                }
            }
        }
    }

    /// The recorded file and the folder to remove after it is read.
    pub(crate) fn take(&mut self) -> Option<(PathBuf, PathBuf)> {
        self.recorded.take()
    }
}

impl std::fmt::Debug for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Phase")
            .field("plan", &self.plan)
            .field("recording", &self.running.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some((rec, dir)) = self.running.take() {
            let _ = rec.stop();
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some((_, dir)) = self.recorded.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The folded stacks of a recording made by a window, its folder removed after.
pub(crate) fn fold_recording(data: &Path, dir: &Path) -> Result<String> {
    let folded = folded(data);
    let _ = std::fs::remove_dir_all(dir);
    folded
}

/// `perf script` of a recording, folded: `frame;frame;frame count` lines.
pub(crate) fn folded(data: &Path) -> Result<String> {
    let out = Command::new(PERF)
        .args(["script", "--no-inline", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("failed to run {PERF} script"))?;
    if !out.status.success() {
        bail!(
            "perf script failed: {}",
            last_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    fold(&out.stdout)
}

/// Fold `perf script` output into stacks (`inferno::collapse::perf`).
pub(crate) fn fold(script: &[u8]) -> Result<String> {
    use inferno::collapse::perf::{Folder, Options};
    use inferno::collapse::Collapse;
    let mut out = Vec::new();
    Folder::from(Options::default())
        .collapse(script, &mut out)
        .context("failed to fold perf script's stacks")?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn last_line(text: &str) -> String {
    crate::escape::terminal(text.trim().lines().last().unwrap_or(""))
}

/// Whether perf can sample another process here: the binary runs, and the kernel lets this
/// user profile others (`perf_event_paranoid` <= 1, or root). The reason when not.
pub(crate) fn available() -> Result<(), String> {
    static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    ANSWER.get_or_init(ask_available).clone()
}

fn ask_available() -> Result<(), String> {
    let version = Command::new(PERF).arg("--version").output();
    match version {
        Ok(o) if o.status.success() => {}
        _ => {
            return Err(format!(
                "`{PERF}` does not run here (Debian: apt-get install linux-perf)"
            ))
        }
    }
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    match (root, paranoid) {
        (true, _) => Ok(()),
        (false, Some(p)) if p <= 1 => Ok(()),
        (false, p) => Err(format!(
            "perf_event_paranoid is {} and rmatrix is not root: another process cannot be \
             profiled (sysctl kernel.perf_event_paranoid=1)",
            p.map_or("unreadable".into(), |p| p.to_string())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_script_folds_into_stacks() {
        // perf script's default fields: comm, pid/tid, time, event, the stack.
        let script = b"mariadbd  1234/1240  100.000001: cpu-clock:\n\
            \t    55d0c0a01234 my_hash_sort+0x24 (/usr/sbin/mariadbd)\n\
            \t    55d0c0a05678 do_command+0x100 (/usr/sbin/mariadbd)\n\
            \n\
            mariadbd  1234/1240  100.010001: cpu-clock:\n\
            \t    55d0c0a01234 my_hash_sort+0x24 (/usr/sbin/mariadbd)\n\
            \t    55d0c0a05678 do_command+0x100 (/usr/sbin/mariadbd)\n\
            \n";
        let f = fold(script).unwrap();
        assert_eq!(f.trim(), "mariadbd;do_command;my_hash_sort 2", "{f}");
    }
}
