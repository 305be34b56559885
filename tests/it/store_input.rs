//! A results store as untrusted input, through the real binary and without Docker: a
//! PostgreSQL "server" that takes the connection and never answers is given up on at the
//! URL's connect_timeout, with exit code 2, by every command that reads or writes a store.
//! (SQLite stores made hostile are in tests/bad, 570-599, and src/store/hostile.rs.)

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::common::rmatrix;

/// A listener on 127.0.0.1 that accepts every connection and never writes a byte; its
/// connections stay open until the test ends.
fn silent_server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            match listener.accept() {
                Ok((socket, _)) => open.push(socket),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    (port, held)
}

#[test]
fn a_postgres_server_that_never_answers_is_given_up_on() {
    let (port, _held) = silent_server();
    let url = format!("postgres://rm:hunter2@127.0.0.1:{port}/db?connect_timeout=2");
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let good = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad/rundirs/good");
    for f in ["manifest.json", "matrix.yaml", "results.csv"] {
        std::fs::copy(good.join(f), run.join(f)).unwrap();
    }
    let run = run.to_str().unwrap();
    let commands: [&[&str]; 3] = [
        &["store", "list", "--store", &url],
        &["store", "import", "--store", &url, run],
        &["history", &url],
    ];
    for args in commands {
        let start = Instant::now();
        let out = rmatrix(args);
        let took = start.elapsed();
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(took < Duration::from_secs(15), "{args:?} took {took:?}");
        assert!(
            out.stderr.contains(&format!(
                "failed to open the store postgres://rm:***@127.0.0.1:{port}/db?connect_timeout=2"
            )),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains("did not complete the connection within 2 s"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
}
