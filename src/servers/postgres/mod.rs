//! The PostgreSQL family: its container with the rendered postgresql.conf and a random
//! password, readiness (a real query), `pg_settings` read back and the variant verified,
//! its counters (`counters`), and the allocator preload checked in the server's maps.

pub(crate) mod client;
pub(crate) mod conf;
pub(crate) mod counters;
pub(crate) mod numeric;
pub(crate) mod sql;
pub(crate) mod sql_client;
pub(crate) mod sql_tables;
pub(crate) mod sql_tool;
pub(crate) mod verify;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::deployed::{Deployed, Endpoint, Launch};
use super::engines::docker::tail;
use super::family::{
    socket_dir, BoxFuture, Family, Liveness, Readiness, Refusal, Setup, SOCKET_DIR_IN_CONTAINER,
};
use super::maps;
use super::spec::{ConfigBlock, ConfigSpec, ServerSpec};
use crate::measure::counters::Status;
use crate::measure::server_seconds::CounterSource;
use crate::model::ResultRow;
use client::CONTROL_DB;
pub(crate) use sql::with_sql;

pub(crate) const CONF_IN_CONTAINER: &str = "/etc/rmatrix/postgresql.conf";

/// `configs.<name>.postgresql_conf`: postgresql.conf settings (`synchronous_commit: off`).
pub(crate) const POSTGRESQL_CONF: ConfigBlock = ConfigBlock {
    key: "postgresql_conf",
    file: "postgresql.conf",
    bare_flags: false,
    check_key: conf::postgres_key,
};

/// The name the server process runs as (`/proc/<pid>/comm`).
const SERVER_COMMANDS: [&str; 1] = ["postgres"];

/// The PostgreSQL family.
pub(crate) struct Postgres;

impl Family for Postgres {
    /// `postgres:17`, a build `postgres-15`, anything naming postgres or pgsql.
    fn claims(&self, name: &str) -> bool {
        name.contains("postgres") || name.contains("pgsql")
    }

    fn build_example(&self) -> &'static str {
        "postgres-15"
    }

    fn after_packages(&self) -> &'static str {
        // As containers/postgres/Dockerfile leaves it: an empty datadir initdb fills.
        "rm -rf /var/lib/postgresql/data/* /etc/postgresql/* \
         && chown -R postgres:postgres /var/lib/postgresql"
    }

    fn counted(&self) -> Option<crate::servers::images::counted::CountedServer> {
        Some(crate::servers::images::counted::CountedServer {
            // Not on PATH: where containers/postgres/Dockerfile links the version's binaries.
            binaries: &["/usr/lib/postgresql/bin/postgres"],
            // The postmaster forks its background processes; each wakes on its own timer
            // (the checkpointer, the writers, autovacuum, the archiver). Backends, which serve
            // the clients, are under none of them.
            timer_roots: &[
                "CheckpointerMain",
                "BackgroundWriterMain",
                "WalWriterMain",
                "AutoVacLauncherMain",
                "AutoVacWorkerMain",
                "PgArchiverMain",
                "PgstatCollectorMain",
                "ApplyLauncherMain",
                "WalSummarizerMain",
            ],
            args: &[],
            // The entrypoint runs it as postgres already.
            user: None,
            // initdb's version check, bootstrap and single-user steps, and the check runs
            // that size its defaults.
            not_the_server: &["-V", "--version", "--boot", "--single", "--check", "-C"],
            forks: true,
        })
    }

    fn config_block(&self) -> ConfigBlock {
        POSTGRESQL_CONF
    }

    /// A `shared_preload_libraries` naming a library outside `conf::PRELOADS_ALLOWED`.
    fn refuses(
        &self,
        _server: &str,
        _spec: &ServerSpec,
        _config: &str,
        settings: &ConfigSpec,
    ) -> Option<Refusal> {
        let block = settings.settings(POSTGRESQL_CONF.key);
        let (name, value) = block
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("shared_preload_libraries"))?;
        let library = conf::refused_preload(value.as_ref().map(|v| v.0.as_str()).unwrap_or(""))?;
        Some(Refusal {
            at: format!("{}.{name}", POSTGRESQL_CONF.key),
            message: format!(
                "`{}` is no library rmatrix preloads from a matrix; allowed: {}",
                crate::input::untrusted::printable(&library),
                conf::PRELOADS_ALLOWED.join(", ")
            ),
        })
    }

    fn container_port(&self) -> u16 {
        5432
    }

    fn user(&self) -> &'static str {
        "postgres"
    }

    /// postgresql.conf written to `dir` and included by the datadir's own (the entrypoint's
    /// initdb), the address, port and socket directory on the command line, which wins.
    fn setup(&self, launch: &Launch, config: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup> {
        let file = dir.join(POSTGRESQL_CONF.file);
        std::fs::write(&file, conf::render(config.settings(POSTGRESQL_CONF.key)))?;
        let file = file.canonicalize()?;
        let (address, port) = match launch.host_network {
            true => ("127.0.0.1", port),
            false => ("*", 5432),
        };
        let mut args = vec![
            "-c".to_string(),
            format!("listen_addresses={address}"),
            "-c".into(),
            format!("port={port}"),
        ];
        let mut shared = (Vec::new(), None);
        if !launch.copy_files {
            let (sock_dir, socket) = socket_dir(launch, dir, &format!(".s.PGSQL.{port}"))?;
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&sock_dir, std::fs::Permissions::from_mode(0o777))?;
            args.extend([
                "-c".into(),
                format!("unix_socket_directories={SOCKET_DIR_IN_CONTAINER}"),
            ]);
            shared = (vec![(sock_dir, SOCKET_DIR_IN_CONTAINER.into())], socket);
        }
        args.extend(config.args.iter().cloned());
        let mut env: Vec<(String, String)> =
            vec![("POSTGRES_PASSWORD".into(), launch.password.into())];
        env.extend(config.container_env());
        Ok(Setup {
            args,
            env,
            mounts: vec![(file, CONF_IN_CONTAINER.into())],
            writable: shared.0,
            socket: shared.1,
        })
    }

    fn readiness(&self) -> Readiness {
        Readiness {
            every: Duration::from_millis(200),
            attempt_timeout: Duration::from_secs(5),
            what: "answering a query",
        }
    }

    /// `SELECT 1` answers in the control database (not while the server still starts or
    /// recovers).
    fn probe<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let c = client::connect(endpoint, CONTROL_DB).await?;
            c.simple_query("SELECT 1").await?;
            Ok(())
        })
    }

    fn read_back<'a>(
        &'a self,
        endpoint: Endpoint,
        config: &'a ConfigSpec,
    ) -> BoxFuture<'a, Result<Deployed>> {
        Box::pin(read_back(endpoint, config))
    }

    /// The allocator preload, from the server process's mapped libraries.
    fn inspect(&self, config: &ConfigSpec, pid: u32, deployed: &mut Deployed) {
        let Some(allocator) = config.allocator else {
            return;
        };
        let found = maps::server_maps(Path::new("/proc"), pid, &SERVER_COMMANDS);
        deployed.checks.retain(|c| c.setting != "allocator");
        deployed.checks.push(maps::check(allocator, found));
    }

    /// Its FATAL, PANIC and ERROR lines and the LOG lines that name a parameter (an
    /// invalid setting names itself in one before the FATAL line), else the tail.
    fn failed_start(&self, log: &str) -> String {
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| {
                ["FATAL:", "PANIC:", "ERROR:", "parameter \""]
                    .iter()
                    .any(|w| l.contains(w))
            })
            .collect();
        match lines.is_empty() {
            true => format!("server log (last lines):\n{}", tail(log, 10)),
            false => format!("server log: {}", lines.join("\n")),
        }
    }

    /// Commits and WAL syncs in the columns every comparison reads.
    fn result_columns(&self, counters: &Status, row: &mut ResultRow) {
        row.srv_com_commit = counters.get("db.xact_commit").copied();
        row.srv_fsyncs = counters.get("wal.wal_sync").copied();
    }

    fn liveness<'a>(&'a self, endpoint: &'a Endpoint) -> Box<dyn Liveness + 'a> {
        Box::new(Asked {
            endpoint,
            conn: None,
        })
    }

    fn counter_source(&self, endpoint: &Endpoint) -> Result<Box<dyn CounterSource>> {
        Ok(Box::new(counters::Reader::connect(endpoint)?))
    }
}

/// The watchdog's connection, in the control database: its queries count in no
/// benchmark database's row.
struct Asked<'a> {
    endpoint: &'a Endpoint,
    conn: Option<tokio_postgres::Client>,
}

impl Liveness for Asked<'_> {
    fn ask(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let conn = match &mut self.conn {
                Some(c) if !c.is_closed() => c,
                _ => self
                    .conn
                    .insert(client::connect(self.endpoint, CONTROL_DB).await?),
            };
            conn.simple_query("SELECT 1").await?;
            Ok(())
        })
    }
}

async fn read_back(endpoint: Endpoint, config: &ConfigSpec) -> Result<Deployed> {
    let c = client::connect(&endpoint, CONTROL_DB).await?;
    let version: String = c.query_one("SHOW server_version", &[]).await?.get(0);
    let built: String = c.query_one("SELECT version()", &[]).await?.get(0);
    let rows = c
        .query(
            "SELECT name, setting, unit, pending_restart FROM pg_settings",
            &[],
        )
        .await?;
    let settings: BTreeMap<String, verify::Setting> = rows
        .iter()
        .map(|r| {
            let setting = verify::Setting {
                value: r.get::<_, Option<String>>(1).unwrap_or_default(),
                unit: r.get(2),
                pending_restart: r.get(3),
            };
            (r.get::<_, String>(0), setting)
        })
        .collect();
    let mut checks = verify::check_settings(config.settings(POSTGRESQL_CONF.key), &settings);
    if let Some(a) = config.allocator {
        // `inspect` replaces this for a container rmatrix started here.
        checks.push(maps::check(
            a,
            Err("the server's maps are read only for a container rmatrix started".into()),
        ));
    }
    let mut variables: BTreeMap<String, String> = settings
        .iter()
        .map(|(k, s)| (k.clone(), s.shown()))
        .collect();
    variables.insert("version()".into(), built);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_start_shows_the_servers_reasons() {
        let log = "2026 LOG:  starting PostgreSQL 15\n\
                   2026 LOG:  parameter \"fsync\" requires a Boolean value\n\
                   2026 FATAL:  configuration file \"/etc/rmatrix/postgresql.conf\" contains errors\n";
        let why = Postgres.failed_start(log);
        assert!(
            why.contains("parameter \"fsync\" requires a Boolean value"),
            "{why}"
        );
        assert!(why.contains("contains errors"), "{why}");
        assert!(!why.contains("starting"), "{why}");
    }
}
