//! The external tools' processes (sysbench, redis-benchmark) die with rmatrix. A dropped
//! iteration kills its tool (`kill_on_drop`); a SIGKILLed rmatrix runs no destructor, so
//! each tool also asks the kernel for SIGKILL when its parent goes (`PR_SET_PDEATHSIG`).
//! The kernel sends it when the thread that started the tool ends: the tools are started
//! from the runtime's worker threads, which live as long as rmatrix does.

use tokio::process::Command;

/// A command for `program` that dies with rmatrix.
pub(crate) fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.kill_on_drop(true);
    let parent = std::process::id() as libc::pid_t;
    // A duet side's tool runs on its side's CPUs (`threads::on_cpus`).
    let cpus = super::threads::client_cpus().map(|c| super::threads::cpu_set(&c));
    // SAFETY: between fork and exec only async-signal-safe calls: prctl, getppid and
    // sched_setaffinity.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(set) = &cpus {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // rmatrix died before the request took effect: nobody would send the signal.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    cmd
}

/// The prefix of the files holding a tool's password (sysbench's `--config-file`).
pub(crate) const SECRET_PREFIX: &str = "rmatrix-secret-";

/// A secret file's name: the owner's pid in it, so a later rmatrix can tell a leftover.
pub(crate) fn secret_name(what: &str) -> String {
    format!(
        "{SECRET_PREFIX}{}-{what}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    )
}

/// Remove the secret files in `dir` that a SIGKILLed rmatrix left (their pid no longer runs);
/// how many.
pub(crate) fn remove_stale_secrets(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(SECRET_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = e
            .metadata()
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == unsafe { libc::geteuid() });
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
        if !ours || alive {
            continue;
        }
        // A file (sysbench's) or a directory (pgbench's password file and logs).
        let gone = match e.file_type().is_ok_and(|t| t.is_dir()) {
            true => std::fs::remove_dir_all(e.path()),
            false => std::fs::remove_file(e.path()),
        };
        if gone.is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_owners_secret_goes_and_a_live_ones_stays() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join(secret_name("sysbench"));
        // pid 2^22 + 1 is above Linux's pid_max: never running.
        let dead = dir
            .path()
            .join(format!("{SECRET_PREFIX}4194305-sysbench-00"));
        let other = dir.path().join("unrelated-4194305");
        for f in [&mine, &dead, &other] {
            std::fs::write(f, "x").unwrap();
        }
        assert_eq!(remove_stale_secrets(dir.path()), 1);
        assert!(mine.exists() && !dead.exists() && other.exists());
    }
}
