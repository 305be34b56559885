//! What several integration test files share.

use std::process::Command;

/// Removes the containers labelled `rmatrix.run=<id>` when dropped, also when the test
/// panics first (Drop cannot await, so this goes through the docker CLI).
pub struct Cleanup(pub String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let list = Command::new("docker")
            .args([
                "ps",
                "-aq",
                "--filter",
                &format!("label=rmatrix.run={}", self.0),
            ])
            .output();
        if let Ok(out) = list {
            for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("docker").args(["rm", "-f", id]).output();
            }
        }
    }
}
