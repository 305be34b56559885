//! The load clients' connections: a raw byte stream (TCP_NODELAY, or a unix socket),
//! authenticated with one hand-framed AUTH. The clients write templates and frame replies
//! themselves (`proto`): on this hot path that is measured to pay (see
//! `scripts/bench-vs-redis-benchmark.sh`); control work uses `servers::redis::control`.

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::servers::redis::Addr;
use crate::workloads::redis::proto::{command, reply_len};

pub trait AsyncStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncStream for T {}

/// A connected byte stream to the server.
pub type Stream = Box<dyn AsyncStream>;

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

/// Open a stream and authenticate it (an empty password skips AUTH).
pub async fn connect(addr: &Addr, password: &str) -> Result<Stream> {
    let mut stream = open(addr).await?;
    if !password.is_empty() {
        stream
            .write_all(&command(&[b"AUTH", password.as_bytes()]))
            .await?;
        // The only reply on the stream so far: read until it is whole.
        let mut buf = Vec::with_capacity(256);
        let (len, is_error) = loop {
            if let Some(reply) = reply_len(&buf)? {
                break reply;
            }
            let mut chunk = [0u8; 1024];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                bail!("the server closed the connection");
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        if is_error {
            let text = String::from_utf8_lossy(&buf[1..len - 2]);
            bail!("AUTH failed on {addr}: {text}");
        }
    }
    Ok(stream)
}
