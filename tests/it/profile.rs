//! Server profiles on a real MariaDB: `profile: {cpu: 99}` records the server's stacks over
//! each measured phase (folded, under profiles/), the summary draws a flame graph per cell,
//! and `compare --profiles` of binlog-off against binlog-on draws the differential one, in
//! which the binlog's write path shows.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{result_rows, Cleanup};

fn run(tmp: &Path, matrix: &Path, name: &str, config: &str) -> PathBuf {
    let dir = tmp.join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", matrix.to_str().unwrap(), "--quiet", "--only"])
        .arg(format!("config={config}"))
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("run rmatrix");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: {}{}",
        String::from_utf8_lossy(&out.stderr),
        crate::common::failed_rows(&dir)
    );
    dir
}

#[test]
fn profiles_flame_graphs_and_the_binlogs_differential() {
    let tmp = tempfile::tempdir().unwrap();
    let _g = Cleanup("rmx-profile".into());
    let matrix = tmp.path().join("rmx-profile.yaml");
    std::fs::write(
        &matrix,
        "name: rmx-profile\nservers:\n  mariadb-10.11: {build: mariadb-10.11}\n\
         configs:\n  binlog-off: {}\n  binlog-on:\n    mycnf: {log_bin: mysql-bin, server_id: 1, sync_binlog: 1}\n\
         engines: [InnoDB]\n\
         workloads:\n  write: {slap: {load_type: write, primary_key: autoincrement}}\n\
         concurrency: [2]\niterations: 2\nlength: 4s\nprofile: {cpu: 99}\n",
    )
    .unwrap();
    let off = run(tmp.path(), &matrix, "off", "binlog-off");
    let on = run(tmp.path(), &matrix, "on", "binlog-on");
    for dir in [&off, &on] {
        let rows = result_rows(dir);
        assert_eq!(rows.len(), 2);
        let folded: Vec<_> = std::fs::read_dir(dir.join("profiles"))
            .expect("profiles/")
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(folded.len(), 2, "one per iteration: {folded:?}");
        let text = std::fs::read_to_string(&folded[0]).unwrap();
        let samples: u64 = text
            .lines()
            .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
            .sum();
        // 4 s of a busy server at 99 Hz: well over a hundred samples, of its own threads.
        assert!(samples > 100, "{samples} samples: {text}");
        assert!(text.lines().all(|l| l.starts_with("mariadbd")), "{text}");
        assert!(text.contains("do_command"), "symbols resolved: {text}");
        let flames: Vec<_> = std::fs::read_dir(dir.join("charts"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("flame-"))
            .collect();
        assert_eq!(flames.len(), 1, "{flames:?}");
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(
            summary.contains(&format!("charts/{}", flames[0])),
            "{summary}"
        );
    }
    let diffs = tmp.path().join("diffs");
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["compare", off.to_str().unwrap(), on.to_str().unwrap()])
        .args(["--ignore", "config", "--profiles"])
        .arg(&diffs)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0) | Some(4)), "{out:?}");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("Differential flame graphs"), "{md}");
    let svgs: Vec<PathBuf> = std::fs::read_dir(&diffs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(svgs.len(), 1, "{svgs:?}");
    let svg = std::fs::read_to_string(&svgs[0]).unwrap();
    roxmltree::Document::parse(&svg).unwrap();
    // The binlog's group commit exists only in the candidate: it shows, in red.
    assert!(svg.contains("MYSQL_BIN_LOG"), "the binlog's frames");
}
