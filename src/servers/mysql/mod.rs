//! The MySQL family (MariaDB, MySQL, Percona Server): its container and my.cnf, readiness
//! (a real query), its variables read back and the variant verified, and its counters.

pub(crate) mod client;
pub(crate) mod dataset;
pub(crate) mod flavor;
pub(crate) mod mycnf;
pub(crate) mod per_second;
pub mod quits;
pub(crate) mod sql;
pub(crate) mod sql_client;
pub(crate) mod sql_tables;
pub(crate) mod sql_tool;
pub(crate) mod thread_pool;
pub(crate) mod verify;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use mysql_async::prelude::Queryable;

use super::deployed::{Deployed, Endpoint, Launch};
use super::engines::docker::tail;
use super::family::{
    socket_dir, BoxFuture, Family, Liveness, Readiness, Refusal, Setup, SOCKET_DIR_IN_CONTAINER,
};
use super::images::source::{FlagStyle, Recipe};
use super::maps;
use super::seal::Seal;
use super::spec::{ConfigBlock, ConfigSpec, ServerSpec};
use crate::measure::counters::{self, Status};
use crate::measure::server_seconds::CounterSource;
use crate::model::ResultRow;
pub use client::MysqlClient;
use flavor::Flavor;
pub(crate) use sql::with_sql;
use verify::check_settings;

pub(crate) const CNF_IN_CONTAINER: &str = "/etc/rmatrix/my.cnf";
const SOCKET_NAME: &str = "mysqld.sock";
/// The names a server process of this family runs as (`/proc/<pid>/comm`).
const SERVER_COMMANDS: [&str; 2] = ["mysqld", "mariadbd"];

/// `configs.<name>.mycnf`: my.cnf `[mysqld]` settings; a null value writes a bare flag
/// (`skip_name_resolve: ~`).
pub(crate) const MYCNF: ConfigBlock = ConfigBlock {
    key: "mycnf",
    file: "my.cnf",
    bare_flags: true,
    check_key: mycnf::mycnf_key,
};

/// Status counters recorded in results.csv (as `srv_<lowercase name>`, `result_columns`).
pub(crate) const RECORDED: [&str; 7] = [
    "Innodb_data_fsyncs",
    "Questions",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
];

/// The MySQL family: MariaDB and MySQL servers.
pub struct Mysql;

impl Family for Mysql {
    fn build_example(&self) -> &'static str {
        "mariadb-10.11"
    }

    fn after_packages(&self) -> &'static str {
        // As containers/mariadb/Dockerfile leaves it: an empty datadir the entrypoint fills.
        "rm -rf /var/lib/mysql/* && mkdir -p /var/lib/mysql /run/mysqld \
         && chown mysql:mysql /var/lib/mysql /run/mysqld"
    }

    fn counted(&self) -> Option<crate::servers::images::counted::CountedServer> {
        Some(crate::servers::images::counted::CountedServer {
            binaries: &["mariadbd", "mysqld"],
            // MariaDB's background pool (InnoDB's purge, page flushing, its master task) runs
            // on timers and on what earlier phases left: 0.001-1.8% of a write phase.
            timer_roots: &["tpool::thread_pool_generic::worker_main(tpool::worker_data*)"],
            // valgrind has no io_uring and cannot reserve the buffer pool's 8 TB default
            // maximum of address space.
            args: &[
                "--innodb-use-native-aio=0",
                "--loose-innodb-buffer-pool-size-max=16g",
            ],
            user: Some("mysql"),
            not_the_server: &["--bootstrap", "--initialize-insecure", "--initialize"],
            forks: false,
        })
    }

    fn recipes(&self) -> &'static [Recipe] {
        const R: &[Recipe] = &[
            Recipe {
                name: "mariadb",
                folder: "mariadb",
                entrypoint_from: "mariadb",
                flags: FlagStyle::Cmake,
            },
            Recipe {
                name: "mysql",
                folder: "mysql",
                entrypoint_from: "mysql",
                flags: FlagStyle::Cmake,
            },
        ];
        R
    }

    fn config_block(&self) -> ConfigBlock {
        MYCNF
    }

    /// A thread pool where the image or build names Oracle MySQL (`thread_pool`).
    fn refuses(
        &self,
        server: &str,
        spec: &ServerSpec,
        config: &str,
        settings: &ConfigSpec,
    ) -> Option<Refusal> {
        thread_pool::refuses(server, spec, config, settings.settings(MYCNF.key))
    }

    fn container_port(&self) -> u16 {
        3306
    }

    fn user(&self) -> &'static str {
        "root"
    }

    /// The rendered my.cnf is written to `dir` and mounted; the root password and host go
    /// in the environment variables the official images and ours read. The server's unix
    /// socket is in a directory shared with this host (`socket_dir`), open to the server's
    /// own user in the container.
    fn setup(&self, launch: &Launch, config: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup> {
        let cnf = dir.join(MYCNF.file);
        std::fs::write(&cnf, mycnf::render(config.settings(MYCNF.key)))?;
        let cnf = cnf.canonicalize()?;
        // Official images and ours both pass arguments to the server; --defaults-extra-file
        // must come first, and the command line wins over files for port and address.
        let mut args = vec![format!("--defaults-extra-file={CNF_IN_CONTAINER}")];
        let container_port = if launch.host_network { port } else { 3306 };
        args.push(format!("--port={container_port}"));
        // On the host network only loopback; on a bridge the container's own address, which
        // Docker publishes on the host's 127.0.0.1 only (images built from Debian's packages
        // ship `bind-address = 127.0.0.1`, which a bridge cannot reach).
        args.push(if launch.host_network {
            "--bind-address=127.0.0.1".into()
        } else {
            "--bind-address=0.0.0.0".into()
        });
        // An engine on another host would create the directory there, closed to the server's
        // user: the server keeps its image's socket, and clients use TCP.
        let mut shared = (Vec::new(), None);
        if !launch.copy_files {
            let (sock_dir, socket) = socket_dir(launch, dir, SOCKET_NAME)?;
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&sock_dir, std::fs::Permissions::from_mode(0o777))?;
            args.push(format!("--socket={SOCKET_DIR_IN_CONTAINER}/{SOCKET_NAME}"));
            shared = (vec![(sock_dir, SOCKET_DIR_IN_CONTAINER.into())], socket);
        }
        args.extend(config.args.iter().cloned());
        let mut env: Vec<(String, String)> = vec![
            ("MARIADB_ROOT_PASSWORD".into(), launch.password.into()),
            ("MYSQL_ROOT_PASSWORD".into(), launch.password.into()),
            ("MARIADB_ROOT_HOST".into(), "%".into()),
            ("MYSQL_ROOT_HOST".into(), "%".into()),
        ];
        env.extend(config.container_env());
        Ok(Setup {
            args,
            env,
            mounts: vec![(cnf, CNF_IN_CONTAINER.into())],
            writable: shared.0,
            socket: shared.1,
        })
    }

    fn readiness(&self) -> Readiness {
        Readiness {
            every: Duration::from_millis(250),
            attempt_timeout: Duration::from_secs(5),
            what: "answering a query",
        }
    }

    /// `SELECT 1` answers: the server has finished starting (the official images start a
    /// temporary server first, without networking).
    fn probe<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let mut conn = mysql_async::Conn::new(endpoint.opts(None)).await?;
            conn.query_drop("SELECT 1").await?;
            conn.disconnect().await?;
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

    /// MySQL and Percona name no allocator in their variables: the server process's mapped
    /// libraries replace the check `read_back` could not make.
    fn inspect(&self, config: &ConfigSpec, pid: u32, deployed: &mut Deployed) {
        let Some(allocator) = config.allocator else {
            return;
        };
        if Flavor::reported(&deployed.variables) == Flavor::Mariadb {
            return;
        }
        let check = maps::check(
            allocator,
            maps::server_maps(Path::new("/proc"), pid, &SERVER_COMMANDS),
        );
        deployed.checks.retain(|c| c.setting != "allocator");
        deployed.checks.push(check);
    }

    /// The server answers as the flavor its image or build name promised.
    fn confirm(&self, spec: &ServerSpec, deployed: &mut Deployed) {
        if let Some(expected) = Flavor::of_spec(spec) {
            deployed
                .checks
                .push(flavor::check(expected, &deployed.variables));
        }
    }

    fn failed_start(&self, log: &str) -> String {
        server_error_lines(log)
    }

    /// The `srv_*` columns: the counters every MySQL-family comparison reads.
    fn result_columns(&self, counters: &Status, row: &mut ResultRow) {
        let c = |k: &str| counters.get(k).copied();
        row.srv_questions = c("Questions");
        row.srv_com_select = c("Com_select");
        row.srv_com_insert = c("Com_insert");
        row.srv_com_update = c("Com_update");
        row.srv_com_delete = c("Com_delete");
        row.srv_com_commit = c("Com_commit");
        row.srv_fsyncs = c("Innodb_data_fsyncs");
    }

    fn liveness<'a>(&'a self, endpoint: &'a Endpoint) -> Box<dyn Liveness + 'a> {
        Box::new(Pinged {
            endpoint,
            conn: None,
        })
    }

    fn counter_source(&self, endpoint: &Endpoint) -> Result<Box<dyn CounterSource>> {
        Ok(Box::new(per_second::StatusReader::connect(endpoint)?))
    }

    fn datadir(&self) -> Option<&'static str> {
        Some("/var/lib/mysql")
    }

    fn keeps_data_format(&self, setting: &str) -> bool {
        dataset::keeps_data_format(setting)
    }

    fn checksums<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        schemas: &'a [String],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>>> {
        Box::pin(dataset::checksums(endpoint, schemas))
    }

    fn write_seal<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        seal: &'a Seal,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(dataset::write_seal(endpoint, seal))
    }

    fn read_seal<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Result<Option<Seal>>> {
        Box::pin(dataset::read_seal(endpoint))
    }
}

/// The watchdog's connection: COM_PING is not a statement (not in `Questions`).
struct Pinged<'a> {
    endpoint: &'a Endpoint,
    conn: Option<mysql_async::Conn>,
}

impl Liveness for Pinged<'_> {
    fn ask(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let conn = match &mut self.conn {
                Some(conn) => conn,
                None => self.conn.insert(self.endpoint.connect(None).await?),
            };
            conn.ping().await?;
            Ok(())
        })
    }
}

async fn read_back(endpoint: Endpoint, config: &ConfigSpec) -> Result<Deployed> {
    let mut conn = endpoint.connect(None).await?;
    let version: Option<String> = conn.query_first("SELECT VERSION()").await?;
    let rows: Vec<(String, String)> = conn.query("SHOW GLOBAL VARIABLES").await?;
    let _ = conn.disconnect().await;
    let variables: BTreeMap<String, String> = rows
        .into_iter()
        .map(|(k, v)| (k.to_lowercase(), v))
        .collect();
    // MariaDB names its allocator in `version_malloc_library`; for the others `inspect` reads
    // the server's maps, which an external server's host does not show.
    let by_variable = Flavor::reported(&variables) == Flavor::Mariadb;
    let allocator = config.allocator.filter(|_| by_variable);
    let mut checks = check_settings(config.settings(MYCNF.key), allocator, &variables);
    if let (Some(a), false) = (config.allocator, by_variable) {
        checks.push(maps::check(
            a,
            Err("the server's maps are read only for a container rmatrix started".into()),
        ));
    }
    Ok(Deployed {
        endpoint,
        container: None,
        version: version.unwrap_or_default(),
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

/// The server's counters (SHOW GLOBAL STATUS), read on the driver's own connection.
pub(crate) async fn status(conn: &mut mysql_async::Conn) -> Result<Status> {
    let rows: Vec<(String, String)> = conn.query("SHOW GLOBAL STATUS").await?;
    Ok(counters::parse(rows))
}

/// The counters of a measured phase from the snapshots around it: the second SHOW GLOBAL
/// STATUS counts itself, as do the `reads` of the per-second counters between them
/// (`Window::server_reads`), and only counters that moved (or that the results compare)
/// stay.
pub(crate) fn measured(before: &Status, after: &Status, keep: &[&str], reads: u64) -> Status {
    let mut server = counters::delta(before, after);
    for k in ["Questions", "Com_show_status"] {
        if let Some(q) = server.get_mut(k) {
            *q = q.saturating_sub(1 + reads);
        }
    }
    server.retain(|k, v| *v != 0 || RECORDED.contains(&k.as_str()) || keep.contains(&k.as_str()));
    server
}

/// Wait (up to 10 s) until none of these connection ids is in the server's process list:
/// a dropped client's COM_QUIT counts in Questions, and must not land in the next snapshot.
pub(crate) async fn wait_disconnected(control: &mut mysql_async::Conn, ids: &[u32]) {
    if ids.is_empty() {
        return;
    }
    let list = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let query = format!("SELECT COUNT(*) FROM information_schema.processlist WHERE id IN ({list})");
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        match control.query_first::<u64, _>(query.as_str()).await {
            Ok(Some(0)) | Err(_) => return,
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// The lines of a server log that explain a failed start: its [ERROR] lines, else the tail.
pub(crate) fn server_error_lines(log: &str) -> String {
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("[ERROR]")).collect();
    if errors.is_empty() {
        format!("server log (last lines):\n{}", tail(log, 10))
    } else {
        format!("server log: {}", errors.join("\n"))
    }
}
