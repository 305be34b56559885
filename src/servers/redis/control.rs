//! The control connection to a Redis-family server, on the `redis` crate: readiness PING,
//! INFO, CONFIG GET, ACL users, preparing data. TCP or unix socket, AUTH (user `default`)
//! in the crate's connection setup, RESP2, nothing else sent on connect (no `CLIENT SETINFO`,
//! which would show in INFO commandstats). The load clients do not use it: they frame RESP
//! themselves (`workloads::redis::stream`), where that is measured to pay.

use std::time::Duration;

use anyhow::{Context, Result};
use redis::aio::MultiplexedConnection;
use redis::io::tcp::TcpSettings;
use redis::{
    AsyncConnectionConfig, Client, Cmd, ConnectionAddr, ErrorKind, FromRedisValue,
    IntoConnectionInfo, RedisConnectionInfo, RedisError,
};

use super::Addr;

/// Commands whose second word names what they do (Redis counts them as `acl|setuser`).
const CONTAINER_COMMANDS: &[&str] = &[
    "ACL", "CLIENT", "CLUSTER", "COMMAND", "CONFIG", "FUNCTION", "LATENCY", "MEMORY", "MODULE",
    "OBJECT", "SCRIPT", "SLOWLOG", "XINFO",
];

/// A command that did not give the reply asked for.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// The server answered with an error reply: `reason` is its text (`ERR ...`, `NOAUTH ...`).
    #[error("{command} failed: {reason}")]
    Refused { command: String, reason: String },
    /// No usable reply: the connection failed (then `source` is a `std::io::Error`), or the
    /// reply was not of the type asked for.
    #[error("{command}: {source}")]
    Client {
        command: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// One authenticated connection for control commands (not for load).
pub(crate) struct Control {
    conn: MultiplexedConnection,
}

impl Control {
    /// Connect and authenticate (an empty password sends no AUTH). No time limit but the
    /// system's own for TCP connect; see [`Control::connect_within`].
    pub(crate) async fn connect(addr: &Addr, password: &str) -> Result<Control> {
        let client = Client::open(connection_info(addr, password)?)
            .with_context(|| format!("failed to connect to {addr}"))?;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        match client
            .get_multiplexed_async_connection_with_config(&config)
            .await
        {
            Ok(conn) => Ok(Control { conn }),
            Err(e) if e.kind() == ErrorKind::AuthenticationFailed => Err(anyhow::anyhow!(
                "AUTH failed on {addr}: the server refused the password (a wrong one, or the \
                 server has none set)"
            )),
            Err(e) => {
                // An I/O failure as a std::io::Error, as for commands (see `io_visible`).
                let e = if e.is_io_error() {
                    anyhow::Error::new(std::io::Error::other(e))
                } else {
                    anyhow::Error::new(e)
                };
                Err(e.context(format!("failed to connect to {addr}")))
            }
        }
    }

    /// Connect, authenticate, and give up after `timeout`.
    pub(crate) async fn connect_within(
        addr: &Addr,
        password: &str,
        timeout: Duration,
    ) -> Result<Control> {
        tokio::time::timeout(timeout, Control::connect(addr, password))
            .await
            .with_context(|| format!("connecting to {addr} timed out"))?
    }

    /// Send `cmd` and convert its reply to `T`; an error reply is [`CommandError::Refused`].
    pub(crate) async fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, CommandError> {
        cmd.query_async(&mut self.conn).await.map_err(|e| {
            let command = name(cmd);
            match e.code() {
                Some(code) => CommandError::Refused {
                    command,
                    reason: match e.detail() {
                        Some(detail) => format!("{code} {detail}"),
                        None => code.to_string(),
                    },
                },
                None => CommandError::Client {
                    command,
                    source: io_visible(e),
                },
            }
        })
    }

    /// `INFO <section>` as text (see [`info_fields`]).
    pub(crate) async fn info(&mut self, section: &str) -> Result<String, CommandError> {
        let bytes: Vec<u8> = self.query(redis::cmd("INFO").arg(section)).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `CONFIG GET *`: every setting as `(name, value)`, names as the server spells them.
    pub(crate) async fn config_get_all(&mut self) -> Result<Vec<(String, String)>, CommandError> {
        let items: Vec<Vec<u8>> = self.query(redis::cmd("CONFIG").arg("GET").arg("*")).await?;
        let text = |b: &Vec<u8>| String::from_utf8_lossy(b).into_owned();
        Ok(items
            .chunks_exact(2)
            .map(|kv| (text(&kv[0]), text(&kv[1])))
            .collect())
    }
}

/// A blocking connection (the per-second counters' thread), each connect, read and write
/// bounded by `timeout`.
pub(crate) fn blocking(
    addr: &Addr,
    password: &str,
    timeout: Duration,
) -> Result<redis::Connection> {
    let client = Client::open(connection_info(addr, password)?)?;
    let conn = client.get_connection_with_timeout(timeout)?;
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    Ok(conn)
}

/// Where and how to connect: RESP2, AUTH with `password` unless empty, no `CLIENT SETINFO`.
fn connection_info(addr: &Addr, password: &str) -> Result<redis::ConnectionInfo> {
    let (target, tcp) = match addr {
        Addr::Tcp(host, port) => (
            ConnectionAddr::Tcp(host.clone(), *port),
            // Requests are small and latency is what we measure.
            TcpSettings::default().set_nodelay(true),
        ),
        Addr::Unix(path) => (ConnectionAddr::Unix(path.clone()), TcpSettings::default()),
    };
    let mut redis = RedisConnectionInfo::default().set_skip_set_lib_name();
    if !password.is_empty() {
        redis = redis.set_password(password);
    }
    Ok(target
        .into_connection_info()?
        .set_tcp_settings(tcp)
        .set_redis_settings(redis))
}

/// The crate's error, an I/O failure wrapped as a `std::io::Error`: the crate keeps its
/// I/O errors where an error chain cannot see them, and a failure to reach the server is
/// told from an answer by one in the chain (`servers::deployed::attach_retrying`).
fn io_visible(e: RedisError) -> Box<dyn std::error::Error + Send + Sync> {
    if e.is_io_error() {
        Box::new(std::io::Error::other(e))
    } else {
        Box::new(e)
    }
}

/// A command's name for messages: `INFO`, `ACL SETUSER`.
fn name(cmd: &Cmd) -> String {
    let mut words = cmd.args_iter().filter_map(|a| match a {
        redis::Arg::Simple(b) => Some(String::from_utf8_lossy(b).to_uppercase()),
        _ => None,
    });
    let first = words.next().unwrap_or_default();
    match words.next() {
        Some(sub) if CONTAINER_COMMANDS.contains(&first.as_str()) => format!("{first} {sub}"),
        _ => first,
    }
}

/// `INFO` text as `field -> value` (comments and section headers dropped).
pub(crate) fn info_fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.trim_end().split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on loopback for one connection: each request of `script`, in order, must come
    /// byte for byte, and gets its reply. Join the handle to see a mismatch.
    async fn fake(
        script: Vec<(&'static str, &'static str)>,
    ) -> (Addr, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = Addr::Tcp("127.0.0.1".into(), listener.local_addr().unwrap().port());
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            for (want, reply) in script {
                while buf.len() < want.len() {
                    let mut chunk = [0u8; 1024];
                    let n = s.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "the client left before sending {want:?}");
                    buf.extend_from_slice(&chunk[..n]);
                }
                let got: Vec<u8> = buf.drain(..want.len()).collect();
                assert_eq!(String::from_utf8_lossy(&got), want);
                s.write_all(reply.as_bytes()).await.unwrap();
            }
            // Nothing more may come: the client closes.
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).await.unwrap();
            assert_eq!(String::from_utf8_lossy(&rest), "", "unexpected requests");
        });
        (addr, server)
    }

    #[tokio::test]
    async fn authenticates_then_reads_info_and_config_and_reports_refusals() {
        let (addr, server) = fake(vec![
            ("*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n", "+OK\r\n"),
            ("*1\r\n$4\r\nPING\r\n", "+PONG\r\n"),
            (
                "*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n",
                "$44\r\n# Commandstats\r\ncmdstat_get:calls=3,usec=9\r\n\r\n",
            ),
            (
                "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$1\r\n*\r\n",
                "*4\r\n$2\r\nhz\r\n$2\r\n10\r\n$10\r\nappendonly\r\n$2\r\nno\r\n",
            ),
            (
                "*3\r\n$3\r\nACL\r\n$7\r\nDELUSER\r\n$1\r\nu\r\n",
                "-ERR no such user\r\n",
            ),
            (
                "*1\r\n$4\r\nTIME\r\n",
                "-NOAUTH Authentication required.\r\n",
            ),
        ])
        .await;
        let mut c = Control::connect(&addr, "pw").await.unwrap();
        assert_eq!(
            c.query::<String>(&redis::cmd("PING")).await.unwrap(),
            "PONG"
        );
        let info = c.info("commandstats").await.unwrap();
        assert_eq!(
            info_fields(&info),
            [("cmdstat_get".to_string(), "calls=3,usec=9".to_string())]
        );
        assert_eq!(
            c.config_get_all().await.unwrap(),
            [
                ("hz".to_string(), "10".to_string()),
                ("appendonly".to_string(), "no".to_string())
            ]
        );
        let err = c
            .query::<()>(redis::cmd("ACL").arg("DELUSER").arg("u"))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "ACL DELUSER failed: ERR no such user");
        let err = c.query::<()>(&redis::cmd("TIME")).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "TIME failed: NOAUTH Authentication required."
        );
        drop(c);
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_refused_password_says_so_and_an_absent_server_is_an_io_error() {
        let (addr, server) = fake(vec![(
            "*2\r\n$4\r\nAUTH\r\n$5\r\nwrong\r\n",
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n",
        )])
        .await;
        let err = Control::connect(&addr, "wrong").await.err().unwrap();
        assert!(
            format!("{err:#}").starts_with(&format!("AUTH failed on {addr}: ")),
            "{err:#}"
        );
        server.await.unwrap();

        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let addr = Addr::Tcp("127.0.0.1".into(), closed);
        let err = Control::connect(&addr, "pw").await.err().unwrap();
        assert!(
            format!("{err:#}").starts_with(&format!("failed to connect to {addr}: ")),
            "{err:#}"
        );
        assert!(err.chain().any(|c| c.is::<std::io::Error>()), "{err:#}");
    }

    #[test]
    fn command_names_for_messages() {
        assert_eq!(name(redis::cmd("INFO").arg("commandstats")), "INFO");
        assert_eq!(
            name(redis::cmd("acl").arg("setuser").arg("u")),
            "ACL SETUSER"
        );
        assert_eq!(name(&redis::cmd("TIME")), "TIME");
    }

    #[test]
    fn connection_info_carries_password_and_address() {
        let i = connection_info(&Addr::Tcp("127.0.0.1".into(), 7000), "pw").unwrap();
        assert_eq!(i.redis_settings().password(), Some("pw"));
        assert_eq!(i.redis_settings().username(), None);
        assert!(i.redis_settings().skip_set_lib_name());
        assert!(i.tcp_settings().nodelay());
        assert_eq!(i.addr(), &ConnectionAddr::Tcp("127.0.0.1".into(), 7000));
        let i = connection_info(&Addr::Unix("/s".into()), "").unwrap();
        assert_eq!(i.redis_settings().password(), None);
        assert_eq!(i.addr(), &ConnectionAddr::Unix("/s".into()));
    }

    #[test]
    fn io_failures_stay_visible_in_the_error_chain() {
        let io = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        let e = anyhow::Error::new(CommandError::Client {
            command: "INFO".into(),
            source: io_visible(io),
        });
        assert!(e.chain().any(|c| c.is::<std::io::Error>()), "{e:#}");
        let parse = RedisError::from((ErrorKind::Parse, "bad"));
        let e = anyhow::Error::new(CommandError::Client {
            command: "INFO".into(),
            source: io_visible(parse),
        });
        assert!(!e.chain().any(|c| c.is::<std::io::Error>()), "{e:#}");
    }

    #[test]
    fn info_text_to_fields() {
        let f =
            info_fields("# Server\r\nredis_version:7.0.15\r\n\r\ncmdstat_set:calls=3,usec=9\r\n");
        assert_eq!(
            f,
            [
                ("redis_version".to_string(), "7.0.15".to_string()),
                ("cmdstat_set".to_string(), "calls=3,usec=9".to_string())
            ]
        );
    }
}
