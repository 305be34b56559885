//! The start sequence of a server's container (`family::start`) and its teardown
//! (`servers::teardown`), on the engine double (`engines::double`) with a fake family: no
//! Docker, no network, paused time.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{bail, Result};

use super::engines::double::{Call, Scripted, CONTAINER};
use super::family::{socket_dir, start, BoxFuture, Family, HostSide, Liveness, Readiness, Setup};
use super::spec::{ConfigBlock, ConfigSpec};
use super::{teardown, Deployed, Endpoint, Launch};

/// A family whose server answers after `failing` failed probes (None: never), and
/// whose config file and data directory the sequence places.
struct Fake {
    failing: Option<usize>,
    /// Each probe hangs (only the attempt timeout ends it).
    hangs: bool,
    readiness: Readiness,
    read_back: Result<(), &'static str>,
    datadir: Option<&'static str>,
    probes: AtomicUsize,
    inspected: Mutex<Vec<u32>>,
}

impl Fake {
    fn ready_after(failing: usize) -> Fake {
        Fake {
            failing: Some(failing),
            hangs: false,
            readiness: Readiness {
                every: Duration::from_secs(1),
                attempt_timeout: Duration::from_secs(2),
                what: "answering",
            },
            read_back: Ok(()),
            datadir: None,
            probes: AtomicUsize::new(0),
            inspected: Mutex::new(Vec::new()),
        }
    }

    fn never_ready() -> Fake {
        Fake {
            failing: None,
            ..Fake::ready_after(0)
        }
    }

    fn probes(&self) -> usize {
        self.probes.load(Ordering::SeqCst)
    }
}

struct NotAsked;

impl Liveness for NotAsked {
    fn ask(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async { bail!("the start sequence asks no liveness") })
    }
}

/// What the fake's read-back gives: a server at `endpoint`, nothing checked.
fn reported(endpoint: Endpoint) -> Deployed {
    Deployed {
        endpoint,
        container: None,
        version: "fake 1.0".into(),
        variables: BTreeMap::new(),
        checks: Vec::new(),
        socket: None,
        cgroup: None,
        counters: Default::default(),
        pid: None,
        data_volume: None,
        dumps: None,
    }
}

impl Family for Fake {
    fn build_example(&self) -> &'static str {
        "fake-1"
    }

    fn config_block(&self) -> ConfigBlock {
        ConfigBlock {
            key: "fakecnf",
            file: "fake.conf",
            bare_flags: false,
            check_key: |_| Ok(()),
        }
    }

    fn container_port(&self) -> u16 {
        7000
    }

    fn user(&self) -> &'static str {
        "admin"
    }

    /// A config file (copied in when the launch copies files) and a directory.
    fn setup(&self, _: &Launch, _: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup> {
        let file = dir.join("fake.conf");
        std::fs::write(&file, "answer = yes\n")?;
        Ok(Setup {
            args: vec![format!("--port={port}")],
            env: vec![("FAKE_MODE".into(), "test".into())],
            mounts: vec![
                (file, "/etc/fake.conf".into()),
                (dir.to_path_buf(), "/srv/fake".into()),
            ],
            ..Setup::default()
        })
    }

    fn readiness(&self) -> Readiness {
        self.readiness
    }

    fn probe<'a>(&'a self, _: &'a Endpoint) -> BoxFuture<'a, Result<()>> {
        let tried = self.probes.fetch_add(1, Ordering::SeqCst);
        let hangs = self.hangs;
        let ready = self.failing.is_some_and(|n| tried >= n);
        Box::pin(async move {
            if hangs {
                std::future::pending::<()>().await;
            }
            match ready {
                true => Ok(()),
                false => bail!("connection refused"),
            }
        })
    }

    fn read_back<'a>(
        &'a self,
        endpoint: Endpoint,
        _: &'a ConfigSpec,
    ) -> BoxFuture<'a, Result<Deployed>> {
        Box::pin(async move {
            self.read_back.map_err(|e| anyhow::anyhow!(e))?;
            Ok(reported(endpoint))
        })
    }

    fn inspect(&self, _: &ConfigSpec, pid: u32, _: &mut Deployed) {
        self.inspected.lock().unwrap().push(pid);
    }

    /// Only the lines that say ERROR, as a family picks what explains a failed start.
    fn failed_start(&self, log: &str) -> String {
        let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
        format!("server log: {}", errors.join(" | "))
    }

    fn liveness<'a>(&'a self, _: &'a Endpoint) -> Box<dyn Liveness + 'a> {
        Box::new(NotAsked)
    }

    fn datadir(&self) -> Option<&'static str> {
        self.datadir
    }
}

fn launch<'a>() -> Launch<'a> {
    Launch {
        run_id: "run1",
        instance: "tok1",
        password: "secret",
        host_network: true,
        start_timeout: Duration::from_secs(5),
        cpuset: Some("1".into()),
        cpus: None,
        memory: None,
        copy_files: false,
        host_side: None,
        data_volume: None,
        counted: false,
    }
}

const LOG: &str = "starting\n[ERROR] unknown setting `answer`\nshutting down\n";

async fn start_on(
    engine: &Scripted,
    family: &Fake,
    launch: &Launch<'_>,
    dir: &Path,
) -> Result<Deployed> {
    start(
        engine,
        family,
        launch,
        "rmatrix-run1-srv",
        "fake:1",
        &ConfigSpec::default(),
        dir,
    )
    .await
}

fn c(call: fn(String) -> Call) -> Call {
    call(CONTAINER.into())
}

/// The calls of a start whose container was removed after `polls` asks of its exit code.
fn discarded_after(polls: usize) -> Vec<Call> {
    let mut calls = vec![Call::Start("rmatrix-run1-srv".into())];
    calls.extend((0..polls).map(|_| c(Call::ExitCode)));
    calls.extend([c(Call::Logs), c(Call::Remove)]);
    calls
}

#[tokio::test(start_paused = true)]
async fn a_server_ready_after_failed_probes_is_read_back_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    // No such process: no cgroup is read, and `inspect` is still given the pid.
    let pid = 4_000_000_000;
    let engine = Scripted::default().pid(pid);
    let family = Fake::ready_after(3);
    let began = tokio::time::Instant::now();
    let d = start_on(&engine, &family, &launch(), tmp.path())
        .await
        .unwrap();
    // One probe `every` second until the fourth answers; the exit code asked before each.
    assert_eq!(family.probes(), 4);
    assert_eq!(began.elapsed(), Duration::from_secs(3));
    let mut calls = vec![Call::Start("rmatrix-run1-srv".into())];
    calls.extend((0..4).map(|_| c(Call::ExitCode)));
    calls.push(c(Call::Pid));
    assert_eq!(engine.calls(), calls);
    assert_eq!(d.container.as_deref(), Some(CONTAINER));
    assert_eq!((d.version.as_str(), d.pid), ("fake 1.0", Some(pid)));
    assert!(d.cgroup.is_none());
    assert_eq!(*family.inspected.lock().unwrap(), [pid]);
    assert_eq!(
        (d.endpoint.host.as_str(), d.endpoint.user.as_str()),
        ("127.0.0.1", "admin")
    );
    assert_eq!(d.endpoint.password, "secret");
    // The container as the launch and the family describe it, on the endpoint's port.
    let specs = engine.specs();
    let [spec] = &specs[..] else {
        panic!("one container started")
    };
    assert_eq!(
        (spec.name.as_str(), spec.image.as_str()),
        ("rmatrix-run1-srv", "fake:1")
    );
    assert_eq!(
        (spec.run_id.as_str(), spec.instance.as_str()),
        ("run1", "tok1")
    );
    assert_eq!(spec.args, [format!("--port={}", d.endpoint.port)]);
    assert_eq!(spec.env, [("FAKE_MODE".to_string(), "test".to_string())]);
    assert!(spec.host_network && spec.publish.is_none());
    assert_eq!(spec.cpuset.as_deref(), Some("1"));
    assert!(!tmp.path().join("server.log").exists());
}

#[tokio::test(start_paused = true)]
async fn a_bridge_network_publishes_the_container_port_on_the_endpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Scripted::default();
    let bridge = Launch {
        host_network: false,
        ..launch()
    };
    let d = start_on(&engine, &Fake::ready_after(0), &bridge, tmp.path())
        .await
        .unwrap();
    let spec = &engine.specs()[0];
    assert!(!spec.host_network);
    assert_eq!(spec.publish, Some((7000, d.endpoint.port)));
    // No pid: nothing to inspect.
    assert_eq!(d.pid, None);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_exits_while_awaited_fails_with_its_own_log_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Scripted::default().exits_after(2, 1).log(LOG);
    let family = Fake::never_ready();
    let e = start_on(&engine, &family, &launch(), tmp.path())
        .await
        .err()
        .expect("a failed start");
    // The family's lines of the log first, then why the start failed.
    assert_eq!(
        format!("{e:#}"),
        "server log: [ERROR] unknown setting `answer`: \
         server exited with code 1 before answering"
    );
    assert_eq!(family.probes(), 2);
    assert_eq!(engine.calls(), discarded_after(3));
    let kept = std::fs::read_to_string(tmp.path().join("server.log")).unwrap();
    assert_eq!(kept, LOG);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_fails_at_the_start_timeout_and_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Scripted::default().log(LOG);
    let family = Fake::never_ready();
    let began = tokio::time::Instant::now();
    let e = start_on(&engine, &family, &launch(), tmp.path())
        .await
        .err()
        .expect("a failed start");
    assert_eq!(
        format!("{e:#}"),
        "server log: [ERROR] unknown setting `answer`: \
         server did not answer within 5s (last error: connection refused)"
    );
    // Probes at 0..=6 s: the one after the timeout passed fails the start.
    assert_eq!(family.probes(), 7);
    assert_eq!(began.elapsed(), Duration::from_secs(6));
    assert_eq!(engine.calls(), discarded_after(7));
    assert!(tmp.path().join("server.log").exists());
}

#[tokio::test(start_paused = true)]
async fn a_probe_that_hangs_is_cut_at_its_attempt_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Scripted::default();
    let family = Fake {
        hangs: true,
        ..Fake::never_ready()
    };
    let e = start_on(&engine, &family, &launch(), tmp.path())
        .await
        .err()
        .expect("a failed start");
    let e = format!("{e:#}");
    assert!(
        e.ends_with("server did not answer within 5s (last error: connection attempt timed out)"),
        "{e}"
    );
    // Tries end at 2, 5 and 8 s, one second apart.
    assert_eq!(family.probes(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_container_that_cannot_start_leaves_nothing_to_remove() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = Scripted::default().start_fails("no such image: fake:1");
    let family = Fake::ready_after(0);
    let e = start_on(&engine, &family, &launch(), tmp.path())
        .await
        .err()
        .expect("a failed start");
    assert_eq!(format!("{e:#}"), "no such image: fake:1");
    assert_eq!(engine.calls(), [Call::Start("rmatrix-run1-srv".into())]);
    assert_eq!(family.probes(), 0);
    assert!(!tmp.path().join("server.log").exists());
}

/// Whatever fails once the container runs (the engine, the pid, the read-back), the
/// container is removed and the error carries the family's lines of its log.
#[tokio::test(start_paused = true)]
async fn every_failure_after_the_container_started_removes_it() {
    let engine_gone = || Scripted::default().exit_code_fails("engine gone");
    let no_pid = || Scripted::default().pid_fails("inspect failed");
    let unremovable = || Scripted::default().exits_after(0, 137).remove_fails("busy");
    let plain = Scripted::default;
    let refused = Fake {
        read_back: Err("access denied"),
        ..Fake::ready_after(0)
    };
    let cases: [(Scripted, Fake, &str, Vec<Call>); 4] = [
        (
            engine_gone().log(LOG),
            Fake::ready_after(0),
            "engine gone",
            discarded_after(1),
        ),
        (no_pid().log(LOG), Fake::ready_after(0), "inspect failed", {
            let mut calls = discarded_after(1);
            calls.insert(2, c(Call::Pid));
            calls
        }),
        (plain().log(LOG), refused, "access denied", {
            let mut calls = discarded_after(1);
            calls.insert(2, c(Call::Pid));
            calls
        }),
        // A removal that fails does not hide why the start failed.
        (
            unremovable().log(LOG),
            Fake::never_ready(),
            "server exited with code 137 before answering",
            discarded_after(1),
        ),
    ];
    for (engine, family, why, calls) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let e = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .err()
            .expect("a failed start");
        let expected = format!("server log: [ERROR] unknown setting `answer`: {why}");
        assert_eq!(format!("{e:#}"), expected);
        assert_eq!(engine.calls(), calls, "{why}");
        assert!(tmp.path().join("server.log").exists(), "{why}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_kept_data_set_is_mounted_at_the_family_datadir_only() {
    let on_set = &Launch {
        data_volume: Some("rmatrix-dataset-1".into()),
        ..launch()
    };
    let volumes = |datadir| async move {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default();
        let family = Fake {
            datadir,
            ..Fake::ready_after(0)
        };
        start_on(&engine, &family, on_set, tmp.path())
            .await
            .unwrap();
        engine.specs()[0].volumes.clone()
    };
    let mounted = [("rmatrix-dataset-1".to_string(), "/var/lib/fake".to_string())];
    assert_eq!(volumes(Some("/var/lib/fake")).await, mounted);
    assert!(volumes(None).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn files_are_copied_in_when_the_engine_may_be_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let started = |copy_files| {
        let dir = dir.clone();
        async move {
            let engine = Scripted::default();
            let launch = Launch {
                copy_files,
                ..launch()
            };
            start_on(&engine, &Fake::ready_after(0), &launch, &dir)
                .await
                .unwrap();
            engine.specs().remove(0)
        }
    };
    let bound = started(false).await;
    assert!(bound.files.is_empty());
    assert_eq!(bound.mounts.len(), 2);
    // The file goes in through the engine; a directory cannot, and stays a mount.
    let copied = started(true).await;
    let file = ("/etc/fake.conf".to_string(), b"answer = yes\n".to_vec());
    assert_eq!(copied.files, [file]);
    assert_eq!(copied.mounts, [(dir, "/srv/fake".to_string())]);
}

/// A host side that picks port 4321 and reads the server back itself.
struct Remote {
    awaited: Mutex<Vec<(String, u16, Option<u32>)>>,
    ready: Result<(), &'static str>,
}

impl HostSide for Remote {
    fn free_port(&self) -> BoxFuture<'_, Result<u16>> {
        Box::pin(async { Ok(4321) })
    }

    fn await_ready<'a>(
        &'a self,
        container: &'a str,
        endpoint: &'a Endpoint,
        pid: Option<u32>,
    ) -> BoxFuture<'a, Result<Deployed>> {
        Box::pin(async move {
            let seen = (container.to_string(), endpoint.port, pid);
            self.awaited.lock().unwrap().push(seen);
            self.ready.map_err(|e| anyhow::anyhow!(e))?;
            Ok(reported(endpoint.clone()))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_behind_its_engines_host_is_awaited_there() {
    for ready in [Ok(()), Err("no answer on the engine's host")] {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default().pid(77).log(LOG);
        let family = Fake::ready_after(0);
        let remote = Remote {
            awaited: Mutex::new(Vec::new()),
            ready,
        };
        let there = Launch {
            host_side: Some(&remote),
            ..launch()
        };
        let started = start_on(&engine, &family, &there, tmp.path()).await;
        // Port and wait are the engine host's: this process neither probes nor polls.
        assert_eq!(family.probes(), 0);
        let awaited = remote.awaited.lock().unwrap().clone();
        assert_eq!(awaited, [(CONTAINER.to_string(), 4321, Some(77))]);
        assert_eq!(engine.specs()[0].args, ["--port=4321"]);
        let mut calls = vec![Call::Start("rmatrix-run1-srv".into()), c(Call::Pid)];
        match started {
            Ok(d) => assert_eq!(d.container.as_deref(), Some(CONTAINER)),
            Err(e) => {
                let e = format!("{e:#}");
                assert!(e.ends_with("no answer on the engine's host"), "{e}");
                calls.extend([c(Call::Logs), c(Call::Remove)]);
            }
        }
        assert_eq!(engine.calls(), calls);
    }
}

#[tokio::test]
async fn a_teardown_keeps_the_log_and_removes_container_sockets_and_data() {
    let tmp = tempfile::tempdir().unwrap();
    let (sockets, _) = socket_dir(&launch(), tmp.path(), "s").unwrap();
    let engine = Scripted::default().log(LOG);
    let mut d = reported(launch().endpoint(1, "admin"));
    d.container = Some(CONTAINER.into());
    d.data_volume = Some("rmatrix-run1-srv-data".into());
    teardown(Some(&engine), &d, tmp.path()).await.unwrap();
    let calls = [
        c(Call::Logs),
        c(Call::Remove),
        Call::RemoveVolume("rmatrix-run1-srv-data".into()),
    ];
    assert_eq!(engine.calls(), calls);
    let kept = std::fs::read_to_string(tmp.path().join("server.log")).unwrap();
    assert_eq!(kept, LOG);
    assert!(!sockets.exists());
    // A server rmatrix did not start (an external one) is left alone.
    let engine = Scripted::default();
    d.container = None;
    teardown(Some(&engine), &d, tmp.path()).await.unwrap();
    assert!(engine.calls().is_empty());
    // A failed removal fails the teardown, and its volume is kept.
    let engine = Scripted::default().remove_fails("busy");
    d.container = Some(CONTAINER.into());
    let e = teardown(Some(&engine), &d, tmp.path()).await;
    assert_eq!(format!("{:#}", e.unwrap_err()), "busy");
    assert_eq!(engine.calls(), [c(Call::Logs), c(Call::Remove)]);
}
