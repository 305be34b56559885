//! Whether two engine addresses reach one engine, so that a pool never holds an engine
//! twice (it would run two deployments on one host at once): a socket is the file it
//! resolves to (`/var/run/docker.sock` is `/run/docker.sock` through a symlink), a tcp
//! engine the addresses its host resolves to with its port, an ssh engine its host and port
//! (whoever logs in).

use std::net::ToSocketAddrs as _;
use std::path::{Path, PathBuf};

use super::address::{EngineAddr, Transport};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    /// The socket file itself (device and inode), or its canonical path when it is not
    /// there (yet).
    File(u64, u64),
    Path(PathBuf),
    /// Resolved addresses with the port, or the lower-cased host and port when the name
    /// does not resolve.
    Net(Vec<std::net::SocketAddr>, String),
    Ssh(String),
}

fn socket(path: &Path) -> Identity {
    use std::os::unix::fs::MetadataExt as _;
    if let Ok(m) = std::fs::metadata(path) {
        return Identity::File(m.dev(), m.ino());
    }
    let canonical = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).map(|d| d.join(name)).ok(),
        _ => None,
    };
    Identity::Path(canonical.unwrap_or_else(|| path.to_path_buf()))
}

fn net(authority: &str) -> Identity {
    let resolved = authority
        .to_socket_addrs()
        .map(|a| a.collect())
        .unwrap_or_default();
    Identity::Net(resolved, authority.to_ascii_lowercase())
}

fn identity(a: &EngineAddr) -> Identity {
    match &a.transport {
        Transport::Unix(p) => socket(p),
        Transport::Tcp { authority, .. } => net(authority),
        Transport::Ssh(a) => {
            let host = a.rsplit('@').next().unwrap_or(a).to_ascii_lowercase();
            match host.contains(':') {
                true => Identity::Ssh(host),
                false => Identity::Ssh(format!("{host}:22")),
            }
        }
    }
}

fn same(a: &Identity, b: &Identity) -> bool {
    match (a, b) {
        (Identity::Net(x, hx), Identity::Net(y, hy)) => {
            hx == hy || x.iter().any(|addr| y.contains(addr))
        }
        _ => a == b,
    }
}

/// Refuse a pool with one engine in it twice, naming both spellings.
pub(crate) fn refuse_duplicates(pool: &[EngineAddr]) -> Result<(), String> {
    let ids: Vec<Identity> = pool.iter().map(identity).collect();
    for (i, a) in ids.iter().enumerate() {
        if let Some(j) = ids[..i].iter().position(|b| same(a, b)) {
            let shown = |e: &EngineAddr| crate::escape::terminal(&e.url());
            return Err(format!(
                "engine `{}` is in the pool twice, as `{}` (the same {}): one deployment per \
                 engine at a time needs each engine once",
                shown(&pool[j]),
                shown(&pool[i]),
                match a {
                    Identity::File(..) | Identity::Path(_) => "socket",
                    Identity::Net(..) => "host and port",
                    Identity::Ssh(_) => "ssh host and port",
                }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::engines::address::parse;

    fn pool(urls: &[&str]) -> Vec<EngineAddr> {
        urls.iter().map(|u| parse(u, u, None).unwrap()).collect()
    }

    #[test]
    fn one_socket_through_a_symlink_is_one_engine() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
        let sock = real.join("docker.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let a = format!("unix://{}", sock.display());
        let b = format!("unix://{}/link/docker.sock", tmp.path().display());
        let e = refuse_duplicates(&pool(&[&a, &b])).unwrap_err();
        assert_eq!(
            e,
            format!(
                "engine `{a}` is in the pool twice, as `{b}` (the same socket): one deployment \
                 per engine at a time needs each engine once"
            )
        );
        // Not there (yet): the same by its canonical folder.
        let c = format!("unix://{}/link/other.sock", tmp.path().display());
        let d = format!("unix://{}/other.sock", real.display());
        assert!(refuse_duplicates(&pool(&[&c, &d])).is_err());
        assert!(refuse_duplicates(&pool(&[&a, &c])).is_ok());
    }

    #[test]
    fn hosts_are_compared_by_address_and_port() {
        let e = refuse_duplicates(&pool(&["tcp://localhost:2375", "tcp://127.0.0.1:2375"]));
        assert!(e.unwrap_err().contains("the same host and port"));
        assert!(
            refuse_duplicates(&pool(&["tcp://127.0.0.1:2375", "tcp://127.0.0.1:2376"])).is_ok()
        );
        let e = refuse_duplicates(&pool(&["ssh://a@lab", "ssh://b@LAB:22"]));
        assert!(e.unwrap_err().contains("the same ssh host and port"));
    }
}
