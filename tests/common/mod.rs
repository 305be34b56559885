//! What several integration test files share. Each test crate uses part of it.
#![allow(dead_code)]

use std::process::Command;

/// What a run of the rmatrix binary printed, and its exit code.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the real rmatrix binary with `args`.
pub fn rmatrix(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(args)
        .output()
        .expect("run the rmatrix binary");
    Out {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// Removes the containers labelled `rmatrix.run=<id>` when dropped, also when the test
/// panics first (Drop cannot await, so this goes through the docker CLI).
pub struct Cleanup(pub String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for id in containers(&self.0) {
            let _ = Command::new("docker").args(["rm", "-f", &id]).output();
        }
    }
}

/// Ids of the containers (running or not) labelled `rmatrix.run=<run_id>`.
pub fn containers(run_id: &str) -> Vec<String> {
    Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=rmatrix.run={run_id}"),
        ])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The rows of DIR/results.csv as column -> value maps; an absent file is no rows.
pub fn result_rows(dir: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let Ok(mut r) = csv::Reader::from_path(dir.join("results.csv")) else {
        return Vec::new();
    };
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .zip(rec.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}
