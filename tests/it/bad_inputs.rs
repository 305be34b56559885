//! The corpus of malformed inputs in tests/bad/, run through the real binary: each case is
//! refused with its exact message (file:line:column where there is one) and exit code, never
//! a panic, a raw control character or one of serde's internal names. No Docker: everything
//! is refused before an engine is contacted (DOCKER_HOST points nowhere, to be sure).
//!
//! A case is a file `tests/bad/NNN-name.EXT` whose first lines are headers:
//!
//! ```text
//! # args: plan {}          arguments; {} is this file, {run} a copy of tests/bad/rundirs/good
//!                          ({run}/results.csv a file of it),
//!                          {copy} another copy of {run} (a new one each time),
//!                          {big} a generated 2 MiB matrix, {store} a SQLite store
//!                          holding {run} (then changed by `# sqlite:`), {fifo} a FIFO
//!                          nothing writes to; in an argument `\n`, `\r`, `\t`, `\s` (a
//!                          space), `\\` and `\u{HEX}` are that character
//! # exit: 2                the exit code
//! # stderr: m.yaml:4:3: …  a substring of stderr (repeatable)
//! # not-stderr: hunter2    a text stderr must not have (repeatable)
//! # stdout: \[x\]          a substring of stdout (repeatable)
//! # not-stdout: <script>   a text stdout must not have (repeatable)
//! # env: DOCKER_HOST=…     an environment variable for the binary
//! # stdin: 17000000 1\s2\n   standard input: the text (escaped as in an argument) repeated
//!                          to at least that many bytes (else stdin is empty)
//! # remove: manifest.json  damage to {run}: remove a file,
//! # truncate: results.csv 400   cut a file to N bytes,
//! # symlink: results.csv /dev/zero   make a file a symlink (its folders made),
//! # write: results.csv     or replace it with the rest of this file (after the headers;
//!                          its folders made)
//! # sqlite: DROP TABLE runs   SQL run on {store} once it holds the run (repeatable)
//! ```
//!
//! Neither stream may carry a raw escape character, and a case that runs longer than
//! `TIMEOUT` fails (a hang is a finding, not a stuck test run).
//!
//! `BAD_INPUTS_PRINT=1 cargo test --release --test bad_inputs -- --nocapture` prints what the
//! binary says for every case.

use std::path::{Path, PathBuf};
use std::process::Command;

const HEADERS: [&str; 13] = [
    "args",
    "exit",
    "stderr",
    "not-stderr",
    "stdout",
    "not-stdout",
    "env",
    "stdin",
    "remove",
    "truncate",
    "symlink",
    "write",
    "sqlite",
];

/// The longest a case may run: every refusal comes long before.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

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
        for spec in self.all("symlink") {
            let (file, target) = spec.split_once(' ').unwrap();
            let _ = std::fs::remove_file(dir.join(file));
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, dir.join(file)).unwrap();
        }
        for file in self.all("write") {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.join(file), &self.body).unwrap();
        }
        dir
    }

    /// A results store holding the (damaged) template run, stored by the binary itself, then
    /// changed by each `# sqlite:` header's SQL as any program could.
    fn store(&self, tmp: &Path) -> PathBuf {
        let db = tmp.join("store.db");
        let run = self.run_dir(tmp);
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["store", "import", "--store"])
            .args([&db, &run])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{}: storing {{run}}: {said}",
            self.name
        );
        let c = rusqlite::Connection::open(&db).unwrap();
        for sql in self.all("sqlite") {
            c.execute_batch(sql)
                .unwrap_or_else(|e| panic!("{}: `{sql}`: {e}", self.name));
        }
        db
    }

    /// Standard input: the `# stdin:` header's text repeated to its size, or nothing.
    fn stdin(&self, tmp: &Path) -> std::process::Stdio {
        let Some(spec) = self.all("stdin").next() else {
            return std::process::Stdio::null();
        };
        let (size, text) = spec.split_once(' ').unwrap();
        let (size, text): (usize, String) = (size.parse().unwrap(), unescape(text));
        let path = tmp.join("stdin");
        std::fs::write(&path, text.repeat(size.div_ceil(text.len()))).unwrap();
        std::fs::File::open(path).unwrap().into()
    }

    fn args(&self, tmp: &Path) -> Vec<String> {
        self.one("args")
            .split_whitespace()
            .enumerate()
            .map(|(i, a)| match a {
                "{}" => self.path.display().to_string(),
                "{run}" => self.run_dir(tmp).display().to_string(),
                "{copy}" => {
                    let run = self.run_dir(tmp);
                    let copy = tmp.join(format!("copy{i}"));
                    std::fs::create_dir_all(&copy).unwrap();
                    for entry in std::fs::read_dir(&run).unwrap() {
                        let entry = entry.unwrap();
                        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
                    }
                    copy.display().to_string()
                }
                "{store}" => self.store(tmp).display().to_string(),
                "{big}" => {
                    let big = tmp.join("big.yaml");
                    let line = "# a comment line that makes this matrix far too large\n";
                    std::fs::write(&big, line.repeat(2 * 1024 * 1024 / line.len() + 1)).unwrap();
                    big.display().to_string()
                }
                "{fifo}" => {
                    let fifo = tmp.join("fifo");
                    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                    fifo.display().to_string()
                }
                other if other.starts_with("{run}/") => {
                    format!("{}{}", self.run_dir(tmp).display(), &other["{run}".len()..])
                }
                other => unescape(other),
            })
            .collect()
    }
}

/// An argument with its escapes (`\n`, `\u{202e}`...) made the characters they stand for, so
/// that a case can pass what a header line cannot hold.
fn unescape(arg: &str) -> String {
    let mut out = String::new();
    let mut chars = arg.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('s') => out.push(' '),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            other => panic!("`\\{other:?}` in the argument `{arg}`: no such escape"),
        }
    }
    out
}

/// Run the binary on `args` (DOCKER_HOST pointing nowhere unless the case sets it): its
/// exit code (`None` when killed after `TIMEOUT`), stdout and stderr.
fn run(case: &Case, args: &[String], tmp: &Path) -> (Option<i32>, String, String) {
    let (out, err) = (tmp.join("stdout"), tmp.join("stderr"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rmatrix"));
    cmd.args(args)
        .env("DOCKER_HOST", "unix:///nonexistent/rmatrix-bad-inputs.sock")
        .stdin(case.stdin(tmp))
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for spec in case.all("env") {
        let (k, v) = spec.split_once('=').unwrap();
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run the rmatrix binary");
    let start = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (code, read(&out), read(&err))
}

/// The cases that are matrices `plan` reads as they are (`# args: plan {}`, without an
/// environment, input or damage of their own), sorted: what other readers of a matrix are
/// given too (`schema_validator`).
pub(crate) fn plan_matrices() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| {
            let case = Case::read(p);
            let own = [
                "env", "stdin", "remove", "truncate", "symlink", "write", "sqlite",
            ];
            case.all("args").eq(["plan {}"]) && own.iter().all(|h| case.all(h).next().is_none())
        })
        .collect();
    paths.sort();
    paths
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
        let (code, stdout, stderr) = run(&case, &args, tmp.path());
        let (stdout, stderr) = (stdout.as_str(), stderr.as_str());
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
        for want in case.all("stdout") {
            if !stdout.contains(want) {
                wrong.push(format!("stdout lacks `{want}`"));
            }
        }
        for (stream, text) in [("stderr", stderr), ("stdout", stdout)] {
            for banned in case.all(if stream == "stderr" {
                "not-stderr"
            } else {
                "not-stdout"
            }) {
                if text.contains(banned) {
                    wrong.push(format!("{stream} has `{banned}`"));
                }
            }
            if text.contains('\u{1b}') {
                wrong.push(format!("a raw escape character reached {stream}"));
            }
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
