//! The state a `redis` iteration starts from, seen from the server itself: a Redis container
//! this test runs, measured by rmatrix as an `external` server, so that the test can look at
//! the keys between and after rmatrix's runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const PASSWORD: &str = "state-test-secret";

/// A Redis 7.0 container on a free port of 127.0.0.1, removed when dropped.
struct Server {
    id: String,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rm", "-f", &self.id]).output();
    }
}

impl Server {
    fn start(tmp: &Path) -> Server {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/redis");
        let build = Command::new("docker")
            .args(["build", "-q", "--build-arg", "suite=bookworm"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            build.status.success(),
            "{}",
            String::from_utf8_lossy(&build.stderr)
        );
        let image = String::from_utf8_lossy(&build.stdout).trim().to_string();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = tmp.join("redis.conf");
        std::fs::write(&conf, "save \"\"\nappendonly no\n").unwrap();
        let label = format!("rmatrix.run=redis-state-test-{}", std::process::id());
        let started = Command::new("docker")
            .args(["run", "-d", "--network", "host", "--label", &label])
            .args(["-e", &format!("REDIS_PASSWORD={PASSWORD}"), "-v"])
            .arg(format!("{}:/etc/rmatrix/redis.conf:ro", conf.display()))
            .arg(&image)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .output()
            .unwrap();
        assert!(
            started.status.success(),
            "{}",
            String::from_utf8_lossy(&started.stderr)
        );
        let id = String::from_utf8_lossy(&started.stdout).trim().to_string();
        let server = Server { id, port };
        for _ in 0..50 {
            if server.cli(&["PING"]) == "PONG" {
                return server;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("redis never answered PING");
    }

    /// One command through redis-cli inside the container (the password in its environment).
    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("docker")
            .args(["exec", "-e", &format!("REDISCLI_AUTH={PASSWORD}"), &self.id])
            .args(["redis-cli", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn number(&self, args: &[&str]) -> u64 {
        let text = self.cli(args);
        text.parse()
            .unwrap_or_else(|_| panic!("{args:?} answered {text:?}"))
    }

    /// The server's own count of `command` calls since it started.
    fn calls(&self, command: &str) -> u64 {
        let stats = self.cli(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().unwrap())
    }

    /// Run a matrix of `workloads` (2 clients, 100 warm-up and 2000 measured requests) against
    /// this server; every row must be ok. Returns the rows.
    fn run(&self, tmp: &Path, name: &str, workloads: &str) -> Vec<BTreeMap<String, String>> {
        let matrix = format!(
            "servers:\n  theirs: {{kind: redis, external: {{port: {}, password_env: \
             RSTATE_TEST_PW, may_reset: true}}}}\nworkloads:\n{workloads}concurrency: [2]\nwarmup: 100\n\
             length: 2000\n",
            self.port
        );
        let file = tmp.join(format!("{name}.yaml"));
        std::fs::write(&file, matrix).unwrap();
        let dir = tmp.join(name);
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(&dir)
            .arg("--quiet")
            .env("RSTATE_TEST_PW", PASSWORD)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = crate::common::result_rows(&dir);
        for r in &rows {
            assert_eq!(r["status"], "ok", "{r:?}");
            assert_eq!(r["errors"], "0", "{r:?}");
            assert_eq!(r["queries"], "2000", "{r:?}");
        }
        rows
    }
}

fn counters(dir: &Path, row: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    crate::common::counters_of(dir, row)
}

const POPS: &str = "  a-rpop: {redis: {test: rpop}}\n  b-lpop: {redis: {test: lpop}}\n";
const GET: &str = "  g-get: {redis: {test: get, keyspace: 1000}}\n";
const MSET: &str = "  f-mset: {redis: {test: mset, keyspace: 5000}}\n";

/// An LPOP cell after an RPOP cell, which empties the list it starts from: the LPOP cell
/// still starts from LPUSH n + RPUSH n (n = warm-up + length = 2100), and every one of its
/// 2100 pops removes an element, so n are left.
#[test]
fn a_pop_cell_after_one_that_empties_the_list_still_pops_elements() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    server.run(tmp.path(), "pops", POPS);
    assert_eq!(
        server.number(&["LLEN", "mylist"]),
        2100,
        "LPOP popped no nil"
    );
}

/// A GET cell leaves the same keys whether an MSET over a bigger keyspace (and a stray key)
/// came before it or not.
#[test]
fn keys_do_not_pile_up_across_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    server.cli(&["SET", "stray", "1"]);
    server.run(tmp.path(), "get-alone", GET);
    let keys_alone = server.number(&["DBSIZE"]);
    server.run(tmp.path(), "get-after-mset", &format!("{MSET}{GET}"));
    let keys_after = server.number(&["DBSIZE"]);
    assert_eq!(keys_alone, keys_after, "the same keys, whatever ran before");
    // 2100 uniform draws of 1000 keys leave about 1000 (1 - e^-2.1) = 878 of them.
    assert!((800..=950).contains(&keys_alone), "{keys_alone}");
}

/// The state's commands (FLUSHALL, LPUSH, RPUSH, MSET) reach the server, and none of them is
/// in a row's measured counters, which hold exactly the cell's 2000 requests.
#[test]
fn the_states_commands_are_not_in_the_measured_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path());
    let rows = server.run(tmp.path(), "counts", &format!("{POPS}{MSET}{GET}"));
    for row in &rows {
        let c = counters(&tmp.path().join("counts"), row);
        let cmd = &row["workload"][2..];
        assert_eq!(c[&format!("cmdstat_{cmd}")], 2000, "{c:?}");
        for state in ["flushall", "lpush", "rpush", "mset"] {
            if state != cmd {
                assert!(!c.contains_key(&format!("cmdstat_{state}")), "{cmd}: {c:?}");
            }
        }
    }
    // One FLUSHALL per iteration (4 cells); the fills in batches of 1000: RPOP's LPUSH 3,
    // LPOP's LPUSH 3 and RPUSH 3, MSET 3 for the GET and for the MSET cell, beside the MSET
    // cell's own 2100 (warm-up and measured).
    assert_eq!(server.calls("flushall"), 4);
    assert_eq!((server.calls("lpush"), server.calls("rpush")), (6, 3));
    assert_eq!(server.calls("mset"), 2100 + 6);
}
