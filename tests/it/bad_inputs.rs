//! The corpus of malformed inputs in tests/bad/, run through the real binary: each case is
//! refused with its exact message (file:line:column where there is one) and exit code, never
//! a panic, a raw control character or one of serde's internal names. No Docker: everything
//! is refused before an engine is contacted (DOCKER_HOST points nowhere, to be sure).
//!
//! A case is a file `tests/bad/NNN-name.EXT` whose first lines are headers:
//!
//! ```text
//! # args: plan {}          arguments; {} is this file, {run} a copy of tests/bad/rundirs/good,
//!                          {big} a generated 2 MiB matrix
//! # exit: 2                the exit code
//! # stderr: m.yaml:4:3: …  a substring of stderr (repeatable)
//! # remove: manifest.json  damage to {run}: remove a file,
//! # truncate: results.csv 400   cut a file to N bytes,
//! # write: results.csv     or replace it with the rest of this file (after the headers)
//! ```
//!
//! `BAD_INPUTS_PRINT=1 cargo test --release --test bad_inputs -- --nocapture` prints what the
//! binary says for every case.

use std::path::{Path, PathBuf};
use std::process::Command;

const HEADERS: [&str; 6] = ["args", "exit", "stderr", "remove", "truncate", "write"];

/// serde's internal names that must never reach a user.
const INTERNAL: [&str; 13] = [
    "SlapSpec",
    "OltpSpec",
    "SysbenchSpec",
    "RedisSpec",
    "RedisBenchmarkSpec",
    "ServerSpec",
    "ConfigSpec",
    "ReportSpec",
    "RepeatSpec",
    "WorkloadSpec",
    "newtype",
    "unit variant",
    "panicked",
];

struct Case {
    name: String,
    path: PathBuf,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Case {
    fn read(path: &Path) -> Case {
        let bytes = std::fs::read(path).unwrap();
        let mut headers = Vec::new();
        let mut rest = &bytes[..];
        while let Some(line) = rest.split(|&b| b == b'\n').next() {
            let text = String::from_utf8_lossy(line);
            let Some((key, value)) = text
                .strip_prefix("# ")
                .and_then(|t| t.split_once(':'))
                .filter(|(k, _)| HEADERS.contains(k))
            else {
                break;
            };
            headers.push((key.to_string(), value.trim().to_string()));
            rest = rest.get(line.len() + 1..).unwrap_or_default();
        }
        Case {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            path: path.to_path_buf(),
            headers,
            body: rest.to_vec(),
        }
    }

    fn all<'a>(&'a self, key: &'static str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn one(&self, key: &'static str) -> &str {
        self.all(key)
            .next()
            .unwrap_or_else(|| panic!("{}: no `# {key}:` header", self.name))
    }

    /// A damaged copy of the template run directory.
    fn run_dir(&self, tmp: &Path) -> PathBuf {
        let dir = tmp.join("run");
        std::fs::create_dir_all(&dir).unwrap();
        let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad/rundirs/good");
        for entry in std::fs::read_dir(template).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        for file in self.all("remove") {
            std::fs::remove_file(dir.join(file)).unwrap();
        }
        for spec in self.all("truncate") {
            let (file, len) = spec.split_once(' ').unwrap();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join(file))
                .unwrap();
            f.set_len(len.parse().unwrap()).unwrap();
        }
        for file in self.all("write") {
            std::fs::write(dir.join(file), &self.body).unwrap();
        }
        dir
    }

    fn args(&self, tmp: &Path) -> Vec<String> {
        self.one("args")
            .split_whitespace()
            .map(|a| match a {
                "{}" => self.path.display().to_string(),
                "{run}" => self.run_dir(tmp).display().to_string(),
                "{big}" => {
                    let big = tmp.join("big.yaml");
                    let line = "# a comment line that makes this matrix far too large\n";
                    std::fs::write(&big, line.repeat(2 * 1024 * 1024 / line.len() + 1)).unwrap();
                    big.display().to_string()
                }
                other => other.to_string(),
            })
            .collect()
    }
}

#[test]
fn every_bad_input_is_refused_with_its_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    assert!(paths.len() >= 80, "{} cases in tests/bad", paths.len());
    let print = std::env::var_os("BAD_INPUTS_PRINT").is_some();
    let mut failures = Vec::new();
    for path in &paths {
        let case = Case::read(path);
        let tmp = tempfile::tempdir().unwrap();
        let args = case.args(tmp.path());
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(&args)
            .env("DOCKER_HOST", "unix:///nonexistent/rmatrix-bad-inputs.sock")
            .output()
            .expect("run the rmatrix binary");
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if print {
            println!("== {} (exit {code:?})\n{stderr}", case.name);
        }
        let mut wrong = Vec::new();
        let exit: i32 = case.one("exit").parse().unwrap();
        if code != Some(exit) {
            wrong.push(format!("exit {code:?}, expected {exit}"));
        }
        for want in case.all("stderr") {
            if !stderr.contains(want) {
                wrong.push(format!("stderr lacks `{want}`"));
            }
        }
        if stderr.contains('\u{1b}') {
            wrong.push("a raw escape character reached stderr".into());
        }
        if let Some(word) = INTERNAL.iter().find(|w| stderr.contains(*w)) {
            wrong.push(format!("an internal name reached the user: `{word}`"));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {stderr}",
                case.name,
                wrong.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
