//! Faults of the server itself on real containers: the kernel killing it for lack of memory.

use crate::common::{containers, Cleanup};
use crate::faults::{manifest, rows};

use std::process::Command;

/// A Redis limited to 32 MiB (`memory: 32m`) filled with 4 KiB values until the kernel kills
/// it: the failed rows say OOMKilled with the limit, and the manifest's deployment records it.
#[test]
fn a_server_killed_for_lack_of_memory_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("oom.yaml");
    std::fs::write(
        &m,
        "servers:\n  redis-7.0: {build: redis-7.0, memory: 32m}\n\
         configs:\n  default: {redis_conf: {save: \"\", appendonly: \"no\"}}\n\
         workloads:\n  fill: {redis: {test: set, keyspace: 10000000, data_size: 4096}}\n\
         concurrency: [4]\niterations: 2\nlength: 20s\nstall_timeout: 5s\n",
    )
    .unwrap();
    let name = "faults-oom";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let rs = rows(&out);
    assert!(!rs.is_empty(), "{stderr}");
    assert_eq!(rs[0]["status"], "failed", "{:?}", rs[0]);
    assert!(
        rs[0]["error"].contains("killed for lack of memory (OOMKilled; its memory limit is 32m)"),
        "{}",
        rs[0]["error"]
    );
    let man = manifest(&out);
    let d = &man["deployments"][0];
    assert_eq!(d["oom_killed"], true, "{d}");
    assert_eq!(d["memory_bytes"], 32 << 20, "{d}");
    assert!(containers(name).is_empty());
}
