//! Counted instructions from the CPU's own counters (`counted: perf`): `perf stat` attached
//! to the server's processes for the measured phase, at full speed. It needs a machine whose
//! CPU counters the kernel exposes (bare metal, most cloud VMs of a full socket); where there
//! are none, perf says `<not supported>` and the run stops before it starts a server.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

const PERF: &str = "perf";
/// The server's user-space instructions: its own code, as callgrind counts it (the kernel's
/// work for it is not counted by either).
pub(crate) const INSTRUCTIONS: &str = "instructions:u";

/// Whether this machine counts instructions: `perf stat -e instructions:u true` gives a
/// number. The reason when not, in words a user can act on.
pub(crate) fn available() -> Result<(), String> {
    static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    ANSWER.get_or_init(ask_available).clone()
}

fn ask_available() -> Result<(), String> {
    let out = Command::new(PERF)
        .args(["stat", "-x,", "-e", INSTRUCTIONS, "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(_) => return Err(format!("`{PERF}` does not run here (Debian: linux-perf)")),
    };
    let text = String::from_utf8_lossy(&out.stderr);
    match parse(&text, INSTRUCTIONS) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "this machine has no hardware instruction counter (`perf stat -e {INSTRUCTIONS} \
             true`: {e:#}); `counted: callgrind` counts on any machine"
        )),
    }
}

/// A `perf stat` counting `event` in a set of processes until [`Counting::stop`].
#[derive(Debug)]
pub(crate) struct Counting {
    child: Child,
    output: PathBuf,
    event: &'static str,
}

impl Counting {
    /// Start counting `event` in `pids` (all their threads), written to `output` at the stop.
    pub(crate) fn start(pids: &[u32], event: &'static str, output: &Path) -> Result<Counting> {
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        let child = Command::new(PERF)
            .args(["stat", "-x,", "-e", event, "-p"])
            .arg(list.join(","))
            .arg("-o")
            .arg(output)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("failed to run {PERF} stat"))?;
        Ok(Counting {
            child,
            output: output.to_path_buf(),
            event,
        })
    }

    /// Stop counting (perf writes its counts on SIGINT) and read the count.
    pub(crate) fn stop(mut self) -> Result<u64> {
        // SAFETY: a signal to the child this value owns, which has not been waited for.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        let give_up = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait()?.is_none() {
            if Instant::now() > give_up {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("{PERF} stat did not stop within 10 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let text = std::fs::read_to_string(&self.output)
            .with_context(|| format!("{PERF} stat wrote no {}", self.output.display()))?;
        let _ = std::fs::remove_file(&self.output);
        parse(&text, self.event)
    }
}

/// The count of `event` in `perf stat -x,` output (`value,unit,event,run time,share,...`).
fn parse(text: &str, event: &str) -> Result<u64> {
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.get(2) != Some(&event) {
            continue;
        }
        return match fields[0].trim() {
            v if v.starts_with('<') => bail!("{v} {event}"),
            v => v
                .parse::<f64>()
                .map(|n| n.round() as u64)
                .with_context(|| format!("{event}: `{}` is no count", crate::escape::terminal(v))),
        };
    }
    bail!("no {event} line in perf stat's output")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_read_and_an_unsupported_counter_said() {
        let out = "# started on Sun Dec  6\n\n3409852,,instructions:u,1220345,100.00,,\n";
        assert_eq!(parse(out, "instructions:u").unwrap(), 3_409_852);
        let none = "<not supported>,,instructions:u,0,100.00,,\n";
        let e = parse(none, "instructions:u").unwrap_err().to_string();
        assert_eq!(e, "<not supported> instructions:u");
        assert!(parse("1.5,msec,task-clock,1,100,,\n", "instructions:u").is_err());
        assert_eq!(
            parse("12.7,msec,task-clock,1,100,,\n", "task-clock").unwrap(),
            13
        );
    }

    /// The window itself, with a counter every machine has (the CPU time of the task): this
    /// machine has no instruction counter to try it with.
    #[test]
    fn a_busy_process_is_counted_between_start_and_stop() {
        let mut busy = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let counting = Counting::start(&[busy.id()], "task-clock", &tmp.path().join("c"));
        std::thread::sleep(Duration::from_millis(300));
        let counted = counting.and_then(Counting::stop);
        let _ = busy.kill();
        let _ = busy.wait();
        let msec = counted.unwrap();
        assert!(msec > 0 && msec < 60_000, "{msec} ms");
    }
}
