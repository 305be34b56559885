//! The Redis family (Redis, Valkey): its container with the rendered redis.conf and a random
//! password, readiness (an authenticated PING), `CONFIG GET *` and INFO read back and the
//! variant verified.

pub(crate) mod conf;
pub(crate) mod control;
pub(crate) mod per_second;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};

use super::deployed::{Deployed, Endpoint, Launch};
use super::engines::docker::tail;
use super::family::{
    socket_dir, BoxFuture, Family, Liveness, Readiness, Setup, MAX_SOCKET_PATH,
    SOCKET_DIR_IN_CONTAINER,
};
use super::images::source::{FlagStyle, Recipe};
use super::spec::{ConfigBlock, ConfigSpec};
use crate::measure::counters::Status;
use crate::measure::server_seconds::CounterSource;
use conf as redisconf;
use control::{info_fields, Control};

pub(crate) const CONF_IN_CONTAINER: &str = "/etc/rmatrix/redis.conf";

/// `configs.<name>.redis_conf`: redis.conf settings (`appendfsync: always`, `save: ""`).
pub(crate) const REDIS_CONF: ConfigBlock = ConfigBlock {
    key: "redis_conf",
    file: "redis.conf",
    bare_flags: false,
    check_key: redisconf::redis_key,
};
const SOCKET_NAME: &str = "redis.sock";

/// The Redis family: Redis and Valkey servers.
pub(crate) struct Redis;

/// Not an SQL family (`ServerKind::with_sql`).
pub(crate) fn with_sql<W: super::sql::WithSql>(_: W) -> Option<W::Output> {
    None
}

impl Family for Redis {
    /// `redis:7`, `valkey/valkey:8`, a build `redis-7.0` or `valkey-8.1`.
    fn claims(&self, name: &str) -> bool {
        name.contains("redis") || name.contains("valkey")
    }

    fn build_example(&self) -> &'static str {
        "redis-7.0"
    }

    fn counted(&self) -> Option<crate::servers::images::counted::CountedServer> {
        // serverCron runs `hz` times a second (and more with many clients): its share of a
        // phase follows the phase's length under valgrind.
        Some(crate::servers::images::counted::CountedServer {
            binaries: &["redis-server", "valkey-server"],
            timer_roots: &["serverCron"],
            args: &[],
            user: None,
            not_the_server: &[],
            forks: false,
        })
    }

    fn recipes(&self) -> &'static [Recipe] {
        // Valkey's tree builds as Redis's does; the entrypoint starts whichever it finds.
        const R: &[Recipe] = &[
            Recipe {
                name: "redis",
                folder: "redis",
                entrypoint_from: "redis",
                flags: FlagStyle::Make,
            },
            Recipe {
                name: "valkey",
                folder: "redis",
                entrypoint_from: "redis",
                flags: FlagStyle::Make,
            },
        ];
        R
    }

    fn config_block(&self) -> ConfigBlock {
        REDIS_CONF
    }

    fn container_port(&self) -> u16 {
        6379
    }

    fn user(&self) -> &'static str {
        "default"
    }

    /// redis.conf written to `dir` and mounted read-only, a socket directory mounted
    /// read-write, TCP on a free port of 127.0.0.1.
    fn setup(&self, launch: &Launch, config: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup> {
        let conf = dir.join(REDIS_CONF.file);
        std::fs::write(&conf, redisconf::render(config.settings(REDIS_CONF.key)))?;
        let conf = conf.canonicalize()?;
        let (sock_dir, socket) = socket_dir(launch, dir, SOCKET_NAME)?;
        let socket = socket.filter(|s| s.as_os_str().len() <= MAX_SOCKET_PATH);
        let mut args = Vec::new();
        if launch.host_network {
            args.extend(["--port".into(), port.to_string()]);
            args.extend(["--bind".into(), "127.0.0.1".into()]);
        } else {
            args.extend([
                "--port".into(),
                "6379".into(),
                "--bind".into(),
                "0.0.0.0".into(),
            ]);
        }
        if socket.is_some() {
            args.extend([
                "--unixsocket".into(),
                format!("{SOCKET_DIR_IN_CONTAINER}/{SOCKET_NAME}"),
                "--unixsocketperm".into(),
                "777".into(),
            ]);
        }
        args.extend(config.args.iter().cloned());
        let mut env: Vec<(String, String)> =
            vec![("REDIS_PASSWORD".into(), launch.password.into())];
        env.extend(config.container_env());
        Ok(Setup {
            args,
            env,
            mounts: vec![(conf, CONF_IN_CONTAINER.into())],
            writable: vec![(sock_dir, SOCKET_DIR_IN_CONTAINER.into())],
            socket,
        })
    }

    fn readiness(&self) -> Readiness {
        Readiness {
            every: Duration::from_millis(100),
            attempt_timeout: Duration::from_secs(2),
            what: "answering PING",
        }
    }

    /// An authenticated PING answers PONG (not LOADING).
    fn probe<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let addr = tcp_addr(endpoint);
            let mut conn =
                Control::connect_within(&addr, &endpoint.password, Duration::from_secs(2)).await?;
            match conn.query::<String>(&redis::cmd("PING")).await? {
                pong if pong == "PONG" => Ok(()),
                other => bail!("PING answered {other:?}"),
            }
        })
    }

    fn read_back<'a>(
        &'a self,
        endpoint: Endpoint,
        config: &'a ConfigSpec,
    ) -> BoxFuture<'a, Result<Deployed>> {
        Box::pin(read_back(endpoint, config))
    }

    fn failed_start(&self, log: &str) -> String {
        format!("server log (last lines):\n{}", tail(log, 10))
    }

    fn liveness<'a>(&'a self, endpoint: &'a Endpoint) -> Box<dyn Liveness + 'a> {
        Box::new(Timed {
            endpoint,
            conn: None,
        })
    }

    fn counter_source(&self, endpoint: &Endpoint) -> Result<Box<dyn CounterSource>> {
        let reader = per_second::InfoReader::connect(&tcp_addr(endpoint), &endpoint.password)?;
        Ok(Box::new(reader))
    }
}

/// The watchdog's connection: `TIME` is no command a redis-benchmark test sends.
struct Timed<'a> {
    endpoint: &'a Endpoint,
    conn: Option<Control>,
}

impl Liveness for Timed<'_> {
    fn ask(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let conn = match &mut self.conn {
                Some(conn) => conn,
                None => {
                    let addr = tcp_addr(self.endpoint);
                    self.conn
                        .insert(Control::connect(&addr, &self.endpoint.password).await?)
                }
            };
            conn.query::<()>(&redis::cmd("TIME")).await?;
            Ok(())
        })
    }
}

/// Where a client connects: the TCP endpoint or the server's unix socket.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Addr {
    Tcp(String, u16),
    Unix(PathBuf),
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Addr::Tcp(h, p) => write!(f, "{h}:{p}"),
            Addr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

pub(crate) fn tcp_addr(endpoint: &Endpoint) -> Addr {
    Addr::Tcp(endpoint.host.clone(), endpoint.port)
}

async fn read_back(endpoint: Endpoint, config: &ConfigSpec) -> Result<Deployed> {
    let mut conn = Control::connect_within(
        &tcp_addr(&endpoint),
        &endpoint.password,
        Duration::from_secs(10),
    )
    .await?;
    let mut variables = config_get_all(&mut conn).await?;
    let server = info_fields(&conn.info("server").await?);
    let memory = info_fields(&conn.info("memory").await?);
    let field = |fields: &[(String, String)], k: &str| {
        fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone())
    };
    // Valkey also reports redis_version (the protocol level it is compatible with).
    let version = match field(&server, "valkey_version") {
        Some(v) => format!("valkey {v}"),
        None => format!(
            "redis {}",
            field(&server, "redis_version").unwrap_or_else(|| "unknown".into())
        ),
    };
    if let Some(a) = field(&memory, "mem_allocator") {
        variables.insert("mem_allocator".into(), a);
    }
    let checks = redisconf::check_settings(
        config.settings(REDIS_CONF.key),
        config.allocator,
        &variables,
    );
    Ok(Deployed {
        endpoint,
        container: None,
        version,
        variables,
        checks,
        socket: None,
        cgroup: None,
        counters: Default::default(),
        pid: None,
        data_volume: None,
        dumps: None,
    })
}

/// Every setting the server reports, by lower-case name.
async fn config_get_all(conn: &mut Control) -> Result<BTreeMap<String, String>> {
    Ok(conn
        .config_get_all()
        .await?
        .into_iter()
        .map(|(name, value)| {
            let name = name.to_lowercase();
            // variables.json is a result file: secrets never reach it.
            let value = match name.as_str() {
                "requirepass" | "masterauth" if !value.is_empty() => "(redacted)".into(),
                _ => value,
            };
            (name, value)
        })
        .collect())
}

/// The family's counters: INFO commandstats as `cmdstat_<command>` -> calls (plus rejected calls, which Redis 7+
/// counts apart) and `cmdstat_<command>.usec`.
pub(crate) async fn commandstats(control: &mut Control) -> Result<Status> {
    let text = control.info("commandstats").await?;
    Ok(parse_commandstats(&text))
}

pub(crate) fn parse_commandstats(text: &str) -> Status {
    let mut out = Status::new();
    for (name, fields) in info_fields(text) {
        if !name.starts_with("cmdstat_") {
            continue;
        }
        let mut calls = 0;
        for (k, v) in fields.split(',').filter_map(|f| f.split_once('=')) {
            let n = v.parse::<u64>().unwrap_or(0);
            match k {
                "calls" | "rejected_calls" => calls += n,
                "usec" => {
                    out.insert(format!("{name}.usec"), n);
                }
                _ => {}
            }
        }
        out.insert(name, calls);
    }
    out
}

/// A phase's commandstats without the per-second counters' `reads` of INFO in between
/// (`Window::server_reads`).
pub(crate) fn without_reads(mut server: Status, reads: u64) -> Status {
    if let Some(n) = server.get_mut("cmdstat_info") {
        *n = n.saturating_sub(reads);
        if *n == 0 {
            server.remove("cmdstat_info");
        }
    }
    server
}

/// after - before of two commandstats snapshots; a command absent before counted from zero.
pub(crate) fn commandstats_delta(before: &Status, after: &Status) -> Status {
    after
        .iter()
        .map(|(k, a)| {
            (
                k.clone(),
                a.saturating_sub(before.get(k).copied().unwrap_or(0)),
            )
        })
        .filter(|(_, d)| *d > 0)
        .collect()
}

/// The socket a unix-transport workload connects to.
pub(crate) fn socket_addr(socket: Option<&PathBuf>) -> Result<Addr> {
    socket.map(|p| Addr::Unix(p.clone())).ok_or_else(|| {
        anyhow!(
            "this server has no unix socket on this host (external server, bridge network, \
             or a run directory path too long for a socket): use transport: tcp"
        )
    })
}
