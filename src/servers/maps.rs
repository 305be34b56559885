//! Is an allocator preloaded into the server? Most servers do not report it (MariaDB alone
//! names its allocator in `version_malloc_library`), so the libraries mapped into the server
//! process (`/proc/<pid>/maps`) answer instead. Shared by the families.
//!
//! Read from this host: the engine is local (`docker::check_docker_host`), and the container's
//! main process is one of this host's processes. An exec inside the container cannot read
//! them: the server drops privileges and is then not dumpable, and a container's root has no
//! CAP_SYS_PTRACE.

use std::path::Path;

use crate::servers::check::Check;
use crate::servers::spec::Allocator;

/// The server's maps: the container's main process if it is the server, else one of its
/// children (an image whose entrypoint stays as a parent); `commands` are the names a server
/// process of the family runs as (`/proc/<pid>/comm`). Err says why none could be read.
pub(crate) fn server_maps(proc_root: &Path, pid: u32, commands: &[&str]) -> Result<String, String> {
    let comm = |p: u32| {
        std::fs::read_to_string(proc_root.join(format!("{p}/comm")))
            .map(|c| c.trim().to_string())
            .unwrap_or_default()
    };
    let children = std::fs::read_to_string(proc_root.join(format!("{pid}/task/{pid}/children")))
        .unwrap_or_default();
    let server = std::iter::once(pid)
        .chain(children.split_whitespace().filter_map(|c| c.parse().ok()))
        .find(|p| commands.contains(&comm(*p).as_str()))
        .ok_or_else(|| {
            format!(
                "the container's process {pid} ({}) is not a server and has no server child",
                comm(pid)
            )
        })?;
    std::fs::read_to_string(proc_root.join(format!("{server}/maps"))).map_err(|e| {
        format!("cannot read the server's /proc/{server}/maps: {e} (reading another user's maps needs root)")
    })
}

/// The preloaded allocator's library among the mapped files, by file name: the loader found
/// it wherever this image and architecture keep it.
fn mapped_allocators(maps: &str) -> Vec<&str> {
    let mut libs: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|path| {
            let file = path.rsplit('/').next().unwrap_or("");
            file.starts_with("libtcmalloc") || file.starts_with("libjemalloc")
        })
        .collect();
    libs.dedup();
    libs
}

/// The allocator check from the server's maps (or why they could not be read).
pub(crate) fn check(allocator: Allocator, maps: Result<String, String>) -> Check {
    let expected = format!("{allocator:?}").to_lowercase();
    let base = |actual: Option<String>, status| Check {
        setting: "allocator".into(),
        variable: "/proc/<pid>/maps".into(),
        expected: expected.clone(),
        actual,
        status,
    };
    let maps = match maps {
        Ok(m) => m,
        Err(why) => return base(Some(why), "unverifiable"),
    };
    let libs = mapped_allocators(&maps);
    // By the preloaded file's name, not the allocator's: a server may link an allocator of
    // its own (Debian's mysqld links libtcmalloc.so.4, so its `system` is tcmalloc), and
    // that is not a preload.
    let preloaded = |a: Allocator| {
        a.preload().is_some_and(|(soname, _)| {
            libs.iter()
                .any(|l| l.rsplit('/').next().unwrap_or("").starts_with(soname))
        })
    };
    let ok = match allocator {
        Allocator::System => !preloaded(Allocator::Tcmalloc) && !preloaded(Allocator::Jemalloc),
        a => preloaded(a),
    };
    let actual = match libs.is_empty() {
        true => "no tcmalloc or jemalloc mapped".to_string(),
        false => libs.join(", "),
    };
    base(Some(actual), if ok { "ok" } else { "mismatch" })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
5581d0a00000-5581d0c00000 r--p 00000000 00:27 1 /usr/sbin/mysqld
7f59ea293000-7f59ea29d000 r--p 00000000 00:27 2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2
7f59ea29d000-7f59ea355000 r-xp 0000a000 00:27 2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2
7f59ea400000-7f59ea500000 rw-p 00000000 00:00 0
7f59ea600000-7f59ea700000 r-xp 00000000 00:27 3 /usr/lib/aarch64-linux-gnu/libc.so.6
";

    #[test]
    fn the_mapped_library_decides() {
        let c = check(Allocator::Jemalloc, Ok(MAPS.into()));
        assert_eq!(c.status, "ok");
        assert_eq!(
            c.actual.as_deref(),
            Some("/usr/lib/aarch64-linux-gnu/libjemalloc.so.2")
        );
        assert_eq!(
            check(Allocator::Tcmalloc, Ok(MAPS.into())).status,
            "mismatch"
        );
        assert_eq!(check(Allocator::System, Ok(MAPS.into())).status, "mismatch");
        // A server's own allocator is not a preload.
        let linked = MAPS.replace("libjemalloc.so.2", "libtcmalloc.so.4.6.5");
        assert_eq!(check(Allocator::System, Ok(linked.clone())).status, "ok");
        assert_eq!(check(Allocator::Tcmalloc, Ok(linked)).status, "mismatch");
        let minimal = MAPS.replace("libjemalloc.so.2", "libtcmalloc_minimal.so.4.6.5");
        assert_eq!(check(Allocator::Tcmalloc, Ok(minimal)).status, "ok");
        let plain = MAPS.replace("libjemalloc.so.2", "libm.so.6");
        assert_eq!(check(Allocator::System, Ok(plain.clone())).status, "ok");
        assert_eq!(check(Allocator::Jemalloc, Ok(plain)).status, "mismatch");
        let c = check(Allocator::Jemalloc, Err("no maps".into()));
        assert_eq!(
            (c.status, c.actual.as_deref()),
            ("unverifiable", Some("no maps"))
        );
    }

    const SERVERS: &[&str] = &["mysqld", "mariadbd"];

    #[test]
    fn finds_the_server_among_the_main_process_and_its_children() {
        let root = tempfile::tempdir().unwrap();
        let put = |pid: u32, comm: &str, children: &str| {
            let d = root.path().join(format!("{pid}/task/{pid}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("children"), children).unwrap();
            std::fs::write(root.path().join(format!("{pid}/comm")), format!("{comm}\n")).unwrap();
            std::fs::write(
                root.path().join(format!("{pid}/maps")),
                format!("maps of {pid}"),
            )
            .unwrap();
        };
        put(10, "mysqld", "");
        put(20, "tini", "21 ");
        put(21, "mariadbd", "");
        put(30, "sh", "");
        assert_eq!(server_maps(root.path(), 10, SERVERS).unwrap(), "maps of 10");
        assert_eq!(server_maps(root.path(), 20, SERVERS).unwrap(), "maps of 21");
        let e = server_maps(root.path(), 30, SERVERS).unwrap_err();
        assert!(e.contains("process 30 (sh) is not a server"), "{e}");
    }
}
