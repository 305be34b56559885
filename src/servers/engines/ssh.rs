//! `ssh://` engines as the Docker CLI reaches them: the system `ssh` runs `docker system
//! dial-stdio` on the host, one ssh process per API connection. They are this process's
//! children behind a unix socket of its own, which bollard connects to: each ends with its
//! connection (and with this process: its stdin closes), where bollard's own ssh transport
//! left a persistent ssh master behind for every connection.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use tokio::net::UnixListener;
use tokio::process::Command;

/// A listening socket that forwards every connection through its own `ssh` process. The
/// socket file goes when the last clone of it is dropped.
#[derive(Clone)]
pub(crate) struct SshTunnel {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// The last thing an ssh process said on stderr (why a connection failed).
    last_error: Arc<Mutex<String>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `ssh` arguments for `[USER@]HOST[:PORT]`: batch mode (no prompt), the port as `-p`, the
/// destination after `--` so that it is never read as an option.
pub(crate) fn ssh_args(authority: &str) -> Vec<String> {
    let (user_host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (h, Some(p)),
        _ => (authority, None),
    };
    let mut args = vec!["-o".to_string(), "BatchMode=yes".to_string()];
    if let Some(p) = port {
        args.extend(["-p".to_string(), p.to_string()]);
    }
    args.extend(
        ["--", user_host, "docker", "system", "dial-stdio"]
            .iter()
            .map(|s| s.to_string()),
    );
    args
}

impl SshTunnel {
    /// Listen on a fresh socket under the temp directory for `authority`.
    pub(crate) fn start(authority: &str) -> Result<SshTunnel> {
        let path = std::env::temp_dir().join(format!(
            "rmatrix-ssh-{}-{:08x}.sock",
            std::process::id(),
            rand::random::<u32>()
        ));
        let listener = UnixListener::bind(&path)
            .with_context(|| format!("cannot listen on {}", path.display()))?;
        let args = ssh_args(authority);
        let last_error = Arc::new(Mutex::new(String::new()));
        let errors = last_error.clone();
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(forward(conn, args.clone(), errors.clone()));
            }
        });
        Ok(SshTunnel {
            inner: Arc::new(Inner {
                path,
                last_error,
                task,
            }),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.inner.path
    }

    /// What ssh last wrote on stderr, for an error message.
    pub(crate) fn last_error(&self) -> String {
        self.inner
            .last_error
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }
}

/// One API connection: an ssh process whose stdin and stdout carry it, killed when either
/// side ends.
async fn forward(mut conn: tokio::net::UnixStream, args: Vec<String>, errors: Arc<Mutex<String>>) {
    let child = Command::new("ssh")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            *errors.lock().unwrap_or_else(|e| e.into_inner()) = format!("cannot run ssh: {e}");
            return;
        }
    };
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return;
    };
    let errs = errors.clone();
    let err_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
        if !text.trim().is_empty() {
            *errs.lock().unwrap_or_else(|e| e.into_inner()) = text;
        }
    });
    let mut remote = tokio::io::join(stdout, stdin);
    let _ = tokio::io::copy_bidirectional(&mut conn, &mut remote).await;
    drop(remote);
    let _ = child.kill().await;
    let _ = err_task.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_goes_to_ssh_as_an_option_and_the_host_after_the_end_of_options() {
        assert_eq!(
            ssh_args("me@lab:2222"),
            [
                "-o",
                "BatchMode=yes",
                "-p",
                "2222",
                "--",
                "me@lab",
                "docker",
                "system",
                "dial-stdio"
            ]
        );
        assert_eq!(
            ssh_args("lab"),
            [
                "-o",
                "BatchMode=yes",
                "--",
                "lab",
                "docker",
                "system",
                "dial-stdio"
            ]
        );
    }
}
