//! A MySQL-family server for one deployment: start it in Docker (or attach to an external
//! one), wait until it answers a real query, read back its variables and verify the variant.

pub mod mycnf;
pub mod verify;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use mysql_async::prelude::Queryable;

use super::deployed::{Deployed, Endpoint, Launch};
use super::docker::{tail, ContainerSpec, Engine};
use super::spec::{ConfigSpec, ExternalSpec};
use verify::check_settings;

pub const CNF_IN_CONTAINER: &str = "/etc/rmatrix/my.cnf";

/// Start `image` with `config`; the rendered my.cnf is written to `dir` and mounted.
/// On failure the container is removed and the error carries the server's log lines.
pub async fn start(
    launch: &Launch<'_>,
    name: &str,
    image: &str,
    config: &ConfigSpec,
    dir: &Path,
) -> Result<Deployed> {
    let cnf = dir.join("my.cnf");
    std::fs::write(&cnf, mycnf::render(&config.mycnf))?;
    let cnf = cnf.canonicalize()?;
    let port = free_port()?;
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
    args.extend(config.args.iter().cloned());
    let mut env: Vec<(String, String)> = vec![
        ("MARIADB_ROOT_PASSWORD".into(), launch.password.into()),
        ("MYSQL_ROOT_PASSWORD".into(), launch.password.into()),
        ("MARIADB_ROOT_HOST".into(), "%".into()),
        ("MYSQL_ROOT_HOST".into(), "%".into()),
    ];
    env.extend(config.container_env());
    let spec = ContainerSpec {
        args,
        env,
        mounts: vec![(cnf, CNF_IN_CONTAINER.into())],
        ..launch.container(name, image, 3306, port)
    };
    let id = launch.engine.start(&spec).await?;
    let endpoint = launch.endpoint(port, "root");
    match wait_ready(launch.engine, &id, &endpoint, launch.start_timeout).await {
        Ok(()) => {}
        Err(e) => {
            let log = launch.discard(&id, dir).await;
            return Err(e.context(server_error_lines(&log)));
        }
    }
    let mut deployed = read_back(endpoint, config).await?;
    deployed.container = Some(id);
    Ok(deployed)
}

/// Attach to a server someone else runs. Its config is never changed, only read.
pub async fn attach(ext: &ExternalSpec, config: &ConfigSpec) -> Result<Deployed> {
    let endpoint = Endpoint::external(ext)?;
    super::deployed::attach_retrying(&endpoint, || read_back(endpoint.clone(), config)).await
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
    let checks = check_settings(&config.mycnf, config.allocator, &variables);
    Ok(Deployed {
        endpoint,
        container: None,
        version: version.unwrap_or_default(),
        variables,
        checks,
        socket: None,
    })
}

/// Poll until `SELECT 1` succeeds; fail early when the container exits.
async fn wait_ready(
    engine: &Engine,
    id: &str,
    endpoint: &Endpoint,
    timeout: Duration,
) -> Result<()> {
    let start = Instant::now();
    loop {
        if let Some(code) = engine.exit_code(id).await? {
            bail!("server exited with code {code} before answering a query");
        }
        let attempt = tokio::time::timeout(Duration::from_secs(5), async {
            let mut conn = mysql_async::Conn::new(endpoint.opts(None)).await?;
            conn.query_drop("SELECT 1").await?;
            conn.disconnect().await
        })
        .await;
        let last_err = match attempt {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "connection attempt timed out".to_string(),
        };
        if start.elapsed() > timeout {
            bail!(
                "server did not answer within {}s (last error: {last_err})",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The lines of a server log that explain a failed start: its [ERROR] lines, else the tail.
pub fn server_error_lines(log: &str) -> String {
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("[ERROR]")).collect();
    if errors.is_empty() {
        format!("server log (last lines):\n{}", tail(log, 10))
    } else {
        format!("server log: {}", errors.join("\n"))
    }
}

/// A port nobody listens on now: the kernel picks it, we release it for the server.
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Save the server log and remove the container.
pub async fn stop(engine: &Engine, deployed: &Deployed, dir: &Path) -> Result<()> {
    if let Some(id) = &deployed.container {
        let log = engine.logs(id).await;
        std::fs::write(dir.join("server.log"), log)?;
        engine.remove(id).await?;
    }
    Ok(())
}
