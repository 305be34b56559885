//! The load clients' connections: a raw byte stream (TCP_NODELAY, or a unix socket),
//! authenticated with one hand-framed AUTH. The clients write templates and frame replies
//! themselves (`proto`): on this hot path that is measured to pay (see
//! `scripts/bench/bench-vs-redis-benchmark.sh`); control work uses `servers::redis::control`.

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::servers::redis::Addr;
use crate::workloads::redis::proto::{command, reply_len};

pub(crate) trait AsyncStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncStream for T {}

/// A connected byte stream to the server.
pub(crate) type Stream = Box<dyn AsyncStream>;

/// Open a stream, TCP_NODELAY on (requests are small and latency is what we measure).
pub(crate) async fn open(addr: &Addr) -> Result<Stream> {
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
pub(crate) async fn connect(addr: &Addr, password: &str) -> Result<Stream> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback that expects the AUTH of password `pw`, answers it with
    /// `reply`, then takes whatever comes until the client closes.
    async fn fake(reply: &'static str) -> Addr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = Addr::Tcp("127.0.0.1".into(), listener.local_addr().unwrap().port());
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let n = s.read(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n");
            s.write_all(reply.as_bytes()).await.unwrap();
            let _ = s.read_to_end(&mut Vec::new()).await;
        });
        addr
    }

    #[tokio::test]
    async fn authenticates_with_one_framed_auth() {
        let mut s = connect(&fake("+OK\r\n").await, "pw").await.unwrap();
        s.write_all(b"PING\r\n").await.unwrap();
        let err = connect(&fake("-WRONGPASS invalid password\r\n").await, "pw")
            .await
            .err()
            .unwrap();
        assert!(
            err.to_string().starts_with("AUTH failed on 127.0.0.1:")
                && err.to_string().ends_with(": WRONGPASS invalid password"),
            "{err}"
        );
    }
}
