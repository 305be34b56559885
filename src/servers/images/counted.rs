//! The image of a counted server (`counted: callgrind`): the server's image with valgrind
//! installed from its own Debian suite, and each of the family's server binaries replaced by
//! a wrapper that runs it under callgrind with instrumentation off until a measured phase
//! opens (`measure::counted` turns it on and off).

use std::collections::BTreeMap;

use anyhow::Result;
use sha2::{Digest, Sha256};

use crate::measure::counted::{DUMP_PREFIX, VGDB_PREFIX};
use crate::servers::engines::docker::{Engine, ImageInfo};

/// What counting a family's server needs: the binaries to wrap, and the functions whose
/// instructions are timer work (run every so many milliseconds, so their count follows the
/// phase's wall time under valgrind, not its operations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountedServer {
    /// Program names looked up on the image's PATH; those present are wrapped.
    pub(crate) binaries: &'static [&'static str],
    pub(crate) timer_roots: &'static [&'static str],
    /// Arguments added after the server's own, for what valgrind cannot run.
    pub(crate) args: &'static [&'static str],
    /// The user a server that drops root runs as (MariaDB's `--user=mysql`): valgrind starts
    /// as that user, for the pipes vgdb reaches it by are made at valgrind's start and a
    /// server that changed its user afterwards could not open them.
    pub(crate) user: Option<&'static str>,
    /// Arguments that mark a run of the binary that is not the server (a database's
    /// install or check step): run as it is, not counted.
    pub(crate) not_the_server: &'static [&'static str],
    /// The server serves its clients in forked processes (PostgreSQL): valgrind's
    /// `--trace-children=yes` gives each child its own pipes for vgdb (and would count a
    /// program the server executes, too).
    pub(crate) forks: bool,
}

/// Where the deployment's dump folder is mounted in the container.
pub(crate) const DUMP_DIR_IN_CONTAINER: &str = "/run/rmatrix-callgrind";
/// The folder of a deployment's directory its dumps go to.
pub(crate) const DUMP_DIR: &str = "callgrind";

/// The deployment's dump folder, made for the server to write: any user may (MariaDB,
/// MySQL and PostgreSQL drop root), so it is made anew, empty, under the run's own directory.
pub(crate) fn dump_dir(deployment: &std::path::Path) -> Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = deployment.join(DUMP_DIR);
    // A restarted server's dumps number from 1 again: an earlier start's go first.
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))?;
    Ok(dir.canonicalize()?)
}

/// Bytes every counted server reads as `/dev/urandom` and `/dev/random`: a server seeds its
/// hash functions from them (Redis's dict seed decides which command names share a bucket
/// of its command table, and so how many string compares a lookup takes), and a seed drawn
/// anew at each start moved a build's GET by up to 2% between starts. Fixed, every start of
/// every build hashes alike. A stream of xorshift64* from a constant, so it is the same
/// on every machine.
pub(crate) fn fixed_random(deployment: &std::path::Path) -> Result<std::path::PathBuf> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..RANDOM_BYTES / 8)
        .flat_map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes()
        })
        .collect();
    let path = deployment.join(RANDOM_FILE);
    std::fs::write(&path, bytes)?;
    Ok(path.canonicalize()?)
}

/// Enough for every seed a server draws at start (each open reads from the beginning).
const RANDOM_BYTES: usize = 64 * 1024;
/// The file of a deployment's directory `fixed_random` writes.
const RANDOM_FILE: &str = "callgrind-random";

/// The wrapper installed over each server binary (the binary itself moved to
/// `<path>.uncounted`). The names vgdb meets callgrind by include the user and host from the
/// environment, which some servers overwrite (Redis rewrites its environment for its
/// process title): emptied here and on vgdb's side, both sides agree on them.
fn wrapper(server: &CountedServer) -> String {
    let args: String = server.args.iter().map(|a| format!(" {a}")).collect();
    let as_user = server.user.map_or(String::new(), |u| {
        format!("setpriv --reuid={u} --regid={u} --init-groups ")
    });
    let not_the_server = match server.not_the_server {
        [] => String::new(),
        marks => format!(
            "case \" $* \" in {}) exec \"$0.uncounted\" \"$@\" ;; esac\n",
            (marks.iter())
                .map(|m| format!("*\" {m} \"*"))
                .collect::<Vec<_>>()
                .join("|")
        ),
    };
    let children = if server.forks {
        " --trace-children=yes"
    } else {
        ""
    };
    format!(
        "#!/bin/sh\n\
         # rmatrix counted mode: the server under callgrind, instrumentation off until a\n\
         # measured phase turns it on. An install or check step is not the server.\n\
         {not_the_server}\
         exec {as_user}env -u HOSTNAME -u HOST -u USER -u LOGNAME valgrind --tool=callgrind{children} \\\n  \
         --instr-atstart=no --dump-instr=no --vgdb=yes --vgdb-prefix={VGDB_PREFIX} \\\n  \
         --callgrind-out-file={DUMP_DIR_IN_CONTAINER}/{DUMP_PREFIX}%p \"$0.uncounted\" \"$@\"{args}\n"
    )
}

/// The Dockerfile over `base`: valgrind from the image's own suite, the binaries wrapped
/// (at least one must be there).
fn dockerfile(base: &str, server: &CountedServer) -> String {
    format!(
        "FROM {base}\n\
         RUN apt-get update \\\n \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind \\\n \
         && rm -rf /var/lib/apt/lists/*\n\
         COPY rmatrix-counted /usr/local/lib/rmatrix-counted\n\
         RUN set -e; n=0; for b in {}; do \\\n \
         p=$(command -v \"$b\" || true); [ -n \"$p\" ] || continue; \\\n \
         mv \"$p\" \"$p.uncounted\"; ln -s /usr/local/lib/rmatrix-counted \"$p\"; n=$((n+1)); \\\n \
         done; [ \"$n\" -gt 0 ] || {{ echo 'no server binary to count' >&2; exit 1; }}\n",
        server.binaries.join(" ")
    )
}

/// The counted image of `base` (id `base_id`): built once per base and recipe.
pub(crate) async fn ensure(
    engine: &Engine,
    base: &str,
    base_id: &str,
    server: &CountedServer,
) -> Result<ImageInfo> {
    let (dockerfile, wrapper) = (dockerfile(base, server), wrapper(server));
    let hash = Sha256::digest(format!("{base_id}\0{dockerfile}\0{wrapper}").as_bytes());
    let reference = format!("rmatrix/counted:{:.12}", format!("{hash:x}"));
    if let Some(id) = engine.image_id(&reference).await {
        return Ok(ImageInfo {
            reference,
            id,
            origin: "cached".into(),
            digest: None,
        });
    }
    let mut tar = tar::Builder::new(Vec::new());
    for (name, text, mode) in [
        ("Dockerfile", &dockerfile, 0o644),
        ("rmatrix-counted", &wrapper, 0o755),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(mode);
        header.set_cksum();
        tar.append_data(&mut header, name, text.as_bytes())?;
    }
    let from = format!("the counted recipe over {base}");
    engine
        .build_tar(&reference, tar.into_inner()?, &BTreeMap::new(), &from)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipe_wraps_each_binary_present_and_needs_one() {
        let server = CountedServer {
            binaries: &["redis-server", "valkey-server"],
            timer_roots: &["serverCron"],
            args: &["--extra"],
            user: None,
            not_the_server: &[],
            forks: false,
        };
        let d = dockerfile("rmatrix/redis-7.0:abc", &server);
        assert!(d.starts_with("FROM rmatrix/redis-7.0:abc\n"), "{d}");
        assert!(d.contains("for b in redis-server valkey-server; do"), "{d}");
        assert!(d.contains("[ \"$n\" -gt 0 ]"), "{d}");
        let w = wrapper(&server);
        assert!(w.contains("--instr-atstart=no"), "{w}");
        assert!(w.contains("/run/rmatrix-callgrind/callgrind.out.%p"), "{w}");
        assert!(w.contains("\"$0.uncounted\" \"$@\" --extra\n"), "{w}");
        assert!(w.contains("exec env -u HOSTNAME"), "{w}");
        assert!(!w.contains("case"), "{w}");
        let as_mysql = wrapper(&CountedServer {
            user: Some("mysql"),
            not_the_server: &["--boot", "-V"],
            forks: true,
            ..server
        });
        assert!(
            as_mysql.contains("case \" $* \" in *\" --boot \"*|*\" -V \"*) exec \"$0.uncounted\""),
            "{as_mysql}"
        );
        assert!(
            as_mysql.contains("exec setpriv --reuid=mysql --regid=mysql --init-groups env -u"),
            "{as_mysql}"
        );
        assert!(
            as_mysql.contains("--tool=callgrind --trace-children=yes"),
            "{as_mysql}"
        );
    }
}
