//! Connections rmatrix closed whose COM_QUIT the server may not have taken yet. A quit
//! counts in `Questions` when the server's thread gets to it, which on a busy host can be
//! after the next measured phase's opening snapshot: that phase would count one question
//! more than its clients asked. `close` remembers each connection it closes, per server;
//! a driver `settle`s before its opening snapshot, waiting until they are gone.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mysql_async::Conn;

/// Closed connection ids by server (`host:port` or socket path), with when.
static CLOSED: Mutex<BTreeMap<String, Vec<(u32, Instant)>>> = Mutex::new(BTreeMap::new());

/// A quit older than this is taken or lost: waiting longer would only hold a phase up when a
/// restarted server has given the same id to a connection of its own.
const FORGET_AFTER: Duration = Duration::from_secs(10);

fn server_of(conn: &Conn) -> String {
    let opts = conn.opts();
    match opts.socket() {
        Some(socket) => socket.to_string(),
        None => format!("{}:{}", opts.ip_or_hostname(), opts.tcp_port()),
    }
}

/// Close `conn` (COM_QUIT, without waiting for the server to take it) and remember it.
pub async fn close(conn: Conn) {
    let (server, id) = (server_of(&conn), conn.id());
    let _ = conn.disconnect().await;
    let mut closed = CLOSED.lock().unwrap_or_else(|e| e.into_inner());
    closed.entry(server).or_default().push((id, Instant::now()));
}

/// Wait (up to 10 s) until the connections closed on `control`'s server are gone from its
/// process list, but for `own` (ids a restarted server may have given again).
pub(crate) async fn settle(control: &mut Conn, own: &[u32]) {
    let closed = {
        let mut closed = CLOSED.lock().unwrap_or_else(|e| e.into_inner());
        closed.remove(&server_of(control)).unwrap_or_default()
    };
    let ids: Vec<u32> = (closed.into_iter())
        .filter(|(id, at)| at.elapsed() < FORGET_AFTER && !own.contains(id) && *id != control.id())
        .map(|(id, _)| id)
        .collect();
    super::wait_disconnected(control, &ids).await;
}
