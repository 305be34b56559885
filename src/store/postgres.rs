//! A store on a PostgreSQL server, which may be slow, gone or hostile: connecting (its
//! handshake included) waits at most the URL's `connect_timeout` (`limits::CONNECT` without
//! one), every statement at most `limits::STATEMENT` on the client's clock (a server that
//! never answers ignores its own statement_timeout), and an answer holds at most
//! `limits::ANSWER_BYTES` of text.
//!
//! rmatrix runs inside a tokio runtime and a store is used from synchronous code: the client
//! has a runtime of its own, driven on a thread outside rmatrix's for each call.

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::TryStreamExt as _;
use tokio::runtime::Runtime;
use tokio_postgres::types::{IsNull, ToSql, Type};

use super::db::{answer_bytes, name_list, Db, Val};
use super::limits;

pub(crate) struct Postgres {
    /// None once a statement timed out: the connection is then in an unknown state.
    client: Option<tokio_postgres::Client>,
    rt: Option<Runtime>,
    /// The longest a statement may take.
    limit: Duration,
}

impl Postgres {
    /// Connect to `url`; without a password in it, `PGPASSWORD`'s (as libpq's tools do),
    /// so that none has to be on a command line.
    pub(crate) fn connect(url: &str) -> Result<Postgres> {
        Postgres::connect_within(url, limits::STATEMENT)
    }

    /// `connect`, each statement stopped after `limit`.
    fn connect_within(url: &str, limit: Duration) -> Result<Postgres> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| anyhow!("not a PostgreSQL URL: {e}"))?;
        if config.get_password().is_none() {
            if let Some(p) = std::env::var_os("PGPASSWORD") {
                config.password(p.as_encoded_bytes());
            }
        }
        let wait = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(limits::CONNECT);
        off_runtime(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let client = rt.block_on(async {
                let (client, connection) =
                    tokio::time::timeout(wait, config.connect(tokio_postgres::NoTls))
                        .await
                        .map_err(|_| {
                            anyhow!(
                                "the server did not complete the connection within {} s",
                                wait.as_secs_f64()
                            )
                        })??;
                // Driven whenever a call runs on this runtime.
                tokio::spawn(connection);
                Ok::<_, anyhow::Error>(client)
            })?;
            Ok(Postgres {
                client: Some(client),
                rt: Some(rt),
                limit,
            })
        })
    }

    /// Run `op`, stopped after the statement limit.
    fn within(&mut self, op: Op<'_>) -> Result<Done> {
        let (Some(client), Some(rt)) = (self.client.as_ref(), self.rt.as_ref()) else {
            bail!("the store's connection is closed (a statement timed out before)");
        };
        let limit = self.limit;
        // The timer is made inside the runtime: it needs its clock.
        let done = off_runtime(|| {
            rt.block_on(async { tokio::time::timeout(limit, op.run(client)).await })
        });
        match done {
            Ok(r) => r,
            Err(_) => {
                self.close();
                bail!(
                    "the server did not answer a statement within {} s, the most rmatrix waits",
                    limit.as_secs_f64()
                )
            }
        }
    }

    fn close(&mut self) {
        // Closing runs the client's runtime too: outside rmatrix's.
        let (client, rt) = (self.client.take(), self.rt.take());
        off_runtime(move || drop((client, rt)));
    }
}

/// A statement to run.
enum Op<'a> {
    Batch(&'a str),
    Query(&'a str, &'a [Val]),
    Execute(&'a str, &'a [Val]),
}

/// What it gave.
enum Done {
    Batch,
    Rows(Vec<Vec<Val>>),
    Count(u64),
}

impl Op<'_> {
    async fn run(self, client: &tokio_postgres::Client) -> Result<Done> {
        Ok(match self {
            Op::Batch(sql) => client.batch_execute(sql).await.map(|()| Done::Batch)?,
            Op::Query(sql, params) => Done::Rows(rows(client, sql, params).await?),
            Op::Execute(sql, params) => Done::Count(client.execute(sql, &refs(params)).await?),
        })
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.close();
    }
}

/// Run `f` on a thread of its own, outside any tokio runtime.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Val::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Val::Int(i) => i.to_sql(ty, out),
            Val::Real(f) => f.to_sql(ty, out),
            Val::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

fn pg_row(row: &tokio_postgres::Row) -> Result<Vec<Val>> {
    let mut vals = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let t = col.type_();
        let v = if *t == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)?.map(Val::Int)
        } else if *t == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)?
                .map(|v| Val::Int(i64::from(v)))
        } else if *t == Type::FLOAT8 {
            row.try_get::<_, Option<f64>>(i)?.map(Val::Real)
        } else {
            row.try_get::<_, Option<String>>(i)?.map(Val::Text)
        };
        vals.push(v.unwrap_or(Val::Null));
    }
    Ok(vals)
}

fn refs(params: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A query's rows, read one at a time and counted against `limits::ANSWER_BYTES`.
async fn rows(client: &tokio_postgres::Client, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
    let stream = client.query_raw(sql, refs(params)).await?;
    let mut stream = std::pin::pin!(stream);
    let (mut out, mut bytes) = (Vec::new(), 0u64);
    while let Some(row) = stream.try_next().await? {
        let vals = pg_row(&row)?;
        bytes += answer_bytes(&vals);
        if bytes > limits::ANSWER_BYTES {
            bail!(
                "an answer larger than {} MiB, the most rmatrix reads of one query \
                 (docs/store.md)",
                limits::ANSWER_BYTES >> 20
            );
        }
        out.push(vals);
    }
    Ok(out)
}

impl Db for Postgres {
    fn batch(&mut self, sql: &str) -> Result<()> {
        match self.within(Op::Batch(sql))? {
            Done::Batch => Ok(()),
            _ => bail!("invariant: a batch answers with nothing"),
        }
    }

    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        match self.within(Op::Query(sql, params))? {
            Done::Rows(rows) => Ok(rows),
            _ => bail!("invariant: a query answers with rows"),
        }
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        match self.within(Op::Execute(sql, params))? {
            Done::Count(n) => Ok(n),
            _ => bail!("invariant: a statement answers with a count"),
        }
    }

    fn id_column(&self) -> &'static str {
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    }

    fn objects(&mut self, tables: &[&str]) -> Result<Vec<(String, String)>> {
        let names = name_list(tables);
        let rows = self
            .query(
                &format!(
                    "SELECT table_name::text, CASE table_type WHEN 'BASE TABLE' THEN 'table'::text \
                     ELSE lower(table_type::text) END FROM information_schema.tables \
                     WHERE table_schema = current_schema() AND table_name IN ({names}) \
                     UNION ALL SELECT DISTINCT event_object_table::text, 'trigger'::text \
                     FROM information_schema.triggers \
                     WHERE event_object_schema = current_schema() \
                     AND event_object_table IN ({names})"
                ),
                &[],
            )
            .context("listing the store's tables")?;
        Ok(super::db::text_pairs(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};

    /// A server that accepts the connection and never answers is given up on at the URL's
    /// connect_timeout, the handshake included.
    #[test]
    fn a_server_that_never_answers_is_given_up_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold = std::thread::spawn(move || {
            let (socket, _) = listener.accept().unwrap();
            std::thread::sleep(Duration::from_secs(5));
            drop(socket);
        });
        let start = std::time::Instant::now();
        let e = Postgres::connect(&format!(
            "postgres://u@127.0.0.1:{port}/db?connect_timeout=1"
        ))
        .err()
        .unwrap()
        .to_string();
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert!(
            e.contains("did not complete the connection within 1 s"),
            "{e}"
        );
        hold.join().unwrap();
    }

    /// A server that completes the handshake and then never answers a statement: the
    /// statement is given up on at its limit, and the connection is not used again.
    #[test]
    fn a_statement_without_an_answer_is_given_up_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut startup = [0u8; 4];
            socket.read_exact(&mut startup).unwrap();
            let mut rest = vec![0u8; u32::from_be_bytes(startup) as usize - 4];
            socket.read_exact(&mut rest).unwrap();
            // AuthenticationOk, then ReadyForQuery (idle); then silence.
            socket
                .write_all(b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I")
                .unwrap();
            std::thread::sleep(Duration::from_secs(5));
        });
        let url = format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=2");
        let mut db = Postgres::connect_within(&url, Duration::from_millis(500)).unwrap();
        let start = std::time::Instant::now();
        let e = db.query("SELECT 1", &[]).unwrap_err().to_string();
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert!(e.contains("did not answer a statement within 0.5 s"), "{e}");
        let e = db.batch("SELECT 1").unwrap_err().to_string();
        assert!(e.contains("connection is closed"), "{e}");
        drop(db);
        hold.join().unwrap();
    }
}
