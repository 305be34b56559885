//! A minimal RESP2 connection for Redis-family servers: TCP or unix socket, AUTH, and
//! request/reply calls for control work (readiness, CONFIG GET, INFO). The load clients
//! reuse the same streams but frame replies themselves (see `workload::redis`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::workloads::redis::proto::{command, reply_len};

pub trait AsyncStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncStream for T {}

/// A connected byte stream to the server.
pub type Stream = Box<dyn AsyncStream>;

#[derive(Debug, Clone, PartialEq)]
pub enum Addr {
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

/// A reply, parsed (control connections only; the load path never builds these).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Value>),
}

impl Value {
    /// The reply as text (simple or bulk string).
    pub fn text(&self) -> Option<String> {
        match self {
            Value::Simple(s) => Some(s.clone()),
            Value::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
}

/// Open a stream, TCP_NODELAY on (requests are small and latency is what we measure).
pub async fn open(addr: &Addr) -> Result<Stream> {
    Ok(match addr {
        Addr::Tcp(host, port) => {
            let s = tokio::net::TcpStream::connect((host.as_str(), *port))
                .await
                .with_context(|| format!("failed to connect to {addr}"))?;
            s.set_nodelay(true)?;
            Box::new(s)
        }
        Addr::Unix(path) => Box::new(
            tokio::net::UnixStream::connect(path)
                .await
                .with_context(|| format!("failed to connect to {addr}"))?,
        ),
    })
}

pub struct Conn {
    stream: Stream,
    buf: Vec<u8>,
}

impl Conn {
    /// Connect and authenticate (an empty password skips AUTH).
    pub async fn connect(addr: &Addr, password: &str) -> Result<Conn> {
        let mut conn = Conn {
            stream: open(addr).await?,
            buf: Vec::with_capacity(4096),
        };
        if !password.is_empty() {
            if let Value::Error(e) = conn.call(&[b"AUTH", password.as_bytes()]).await? {
                bail!("AUTH failed on {addr}: {e}");
            }
        }
        Ok(conn)
    }

    /// Connect, authenticate, and give up after `timeout`.
    pub async fn connect_within(addr: &Addr, password: &str, timeout: Duration) -> Result<Conn> {
        tokio::time::timeout(timeout, Conn::connect(addr, password))
            .await
            .with_context(|| format!("connecting to {addr} timed out"))?
    }

    /// Send one command and read its reply.
    pub async fn call(&mut self, args: &[&[u8]]) -> Result<Value> {
        self.stream.write_all(&command(args)).await?;
        loop {
            if let Some((len, _)) = reply_len(&self.buf)? {
                let (value, used) = parse(&self.buf[..len])?;
                debug_assert_eq!(used, len);
                self.buf.drain(..len);
                return Ok(value);
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                bail!("the server closed the connection");
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// A command whose reply must not be an error; returns its text form.
    pub async fn text(&mut self, args: &[&[u8]]) -> Result<String> {
        let name = String::from_utf8_lossy(args.first().copied().unwrap_or_default()).into_owned();
        match self.call(args).await? {
            Value::Error(e) => bail!("{name} failed: {e}"),
            v => v
                .text()
                .with_context(|| format!("{name}: unexpected reply {v:?}")),
        }
    }

    /// The stream, for a load client that frames replies itself.
    pub fn into_stream(self) -> Stream {
        self.stream
    }
}

/// Parse one complete reply (already framed by `reply_len`).
fn parse(buf: &[u8]) -> Result<(Value, usize)> {
    let eol = buf
        .windows(2)
        .position(|w| w == b"\r\n")
        .context("truncated reply")?;
    let line = String::from_utf8_lossy(&buf[1..eol]).into_owned();
    let rest = eol + 2;
    let num = || -> Result<i64> {
        line.parse()
            .with_context(|| format!("bad number {line:?} in reply"))
    };
    Ok(match buf.first() {
        Some(b'+') => (Value::Simple(line), rest),
        Some(b'-') => (Value::Error(line), rest),
        Some(b':') => (Value::Int(num()?), rest),
        Some(b'$') => {
            let n = num()?;
            if n < 0 {
                (Value::Bulk(None), rest)
            } else {
                let end = rest + n as usize;
                (Value::Bulk(Some(buf[rest..end].to_vec())), end + 2)
            }
        }
        Some(b'*') => {
            let n = num()?;
            let mut items = Vec::new();
            let mut pos = rest;
            for _ in 0..n.max(0) {
                let (v, used) = parse(&buf[pos..])?;
                items.push(v);
                pos += used;
            }
            (Value::Array(items), pos)
        }
        other => bail!("unexpected reply type {other:?}"),
    })
}

/// `INFO` text as `field -> value` (comments and section headers dropped).
pub fn info_fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.trim_end().split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_replies() {
        let (v, used) = parse(b"*3\r\n$4\r\nsave\r\n$0\r\n\r\n:7\r\n").unwrap();
        assert_eq!(used, 24);
        assert_eq!(
            v,
            Value::Array(vec![
                Value::Bulk(Some(b"save".to_vec())),
                Value::Bulk(Some(Vec::new())),
                Value::Int(7)
            ])
        );
        assert_eq!(
            parse(b"-ERR no\r\n").unwrap().0,
            Value::Error("ERR no".into())
        );
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
