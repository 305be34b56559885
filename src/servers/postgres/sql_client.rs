//! A client connection to a PostgreSQL server (the blocking `postgres` crate), as sysbench's
//! pgsql driver makes one: statements prepared on the server (`$1` placeholders),
//! BEGIN/COMMIT and text statements as simple queries, and the errors sysbench's driver
//! ignores (deadlock 40P01, serialization failure 40001, unique violation 23505) rolled
//! back before the event restarts.

use anyhow::{Context, Result};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, SimpleQueryMessage, Statement};

use super::client::config;
use super::numeric::Hundredths;
use crate::servers::sql::{AutoId, Cell, Failure, Outcome, Param, Rows, SqlClient};
use crate::servers::Endpoint;

/// sysbench's pgsql driver ignores these (and sends ROLLBACK): `drv_pgsql.c`.
const IGNORED: [SqlState; 3] = [
    SqlState::T_R_DEADLOCK_DETECTED,
    SqlState::T_R_SERIALIZATION_FAILURE,
    SqlState::UNIQUE_VIOLATION,
];
/// The server ended the session: terminated, crashed, shutting down.
const LOST: [SqlState; 3] = [
    SqlState::ADMIN_SHUTDOWN,
    SqlState::CRASH_SHUTDOWN,
    SqlState::CANNOT_CONNECT_NOW,
];

pub(crate) struct PgClient {
    /// Always there until dropped (`Drop` takes it).
    client: Option<Client>,
    /// Inside BEGIN: an error leaves the transaction aborted until ROLLBACK.
    in_block: bool,
    /// `server_version_num`, read once at connect.
    pub(crate) version_num: u32,
}

/// `?` placeholders numbered as PostgreSQL takes them (`$1`, `$2`...). The statement texts
/// hold no `?` but their placeholders.
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

fn classify(e: &postgres::Error) -> Failure {
    match e.code() {
        Some(c) if IGNORED.contains(c) => Failure::Ignored,
        Some(c) if LOST.contains(c) => Failure::Lost,
        _ if e.is_closed() => Failure::Lost,
        // No SQLSTATE: the socket failed, or the server went away mid-answer.
        None => Failure::Lost,
        Some(_) => Failure::Fatal,
    }
}

fn failed(e: postgres::Error) -> (Failure, String) {
    (classify(&e), e.to_string())
}

/// A parameter as the statement's type takes it: the ids and `k` are INTEGER (int4; a
/// range's upper end past the largest id is the largest int4, the same rows), `c` and `pad`
/// CHAR.
enum Typed {
    Int(i32),
    Text(String),
    Fixed(Hundredths),
}

fn typed(p: Param) -> Typed {
    match p {
        Param::UInt(u) => Typed::Int(i32::try_from(u).unwrap_or(i32::MAX)),
        Param::Text(s) => Typed::Text(s),
        Param::Fixed(h) => Typed::Fixed(Hundredths(h)),
    }
}

/// The parameters as the `postgres` crate takes them (borrowing `owned`).
fn refs(owned: &[Typed]) -> Vec<&(dyn ToSql + Sync)> {
    (owned.iter())
        .map(|p| match p {
            Typed::Int(v) => v as &(dyn ToSql + Sync),
            Typed::Text(s) => s as &(dyn ToSql + Sync),
            Typed::Fixed(h) => h as &(dyn ToSql + Sync),
        })
        .collect()
}

impl PgClient {
    /// The connection, for the driver's own statements between phases.
    pub(crate) fn client(&mut self) -> &mut Client {
        self.client.as_mut().expect("invariant: taken only by drop")
    }

    /// A simple query's affected rows (one round trip, one transaction outside BEGIN).
    fn simple(&mut self, q: &str) -> Outcome {
        let msgs = self.client().simple_query(q).map_err(failed)?;
        let changed = (msgs.iter())
            .map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => *n,
                _ => 0,
            })
            .sum();
        Ok((false, changed))
    }
}

/// The `postgres` crate closes a connection on a runtime of its own, which panics on a thread
/// that drives tokio (a driver future dropped between phases by the stall watchdog): closed
/// on a thread of its own, waited for.
impl Drop for PgClient {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

impl SqlClient for PgClient {
    type Statement = Statement;
    const AUTO_ID: AutoId = AutoId::Omitted;

    fn open(endpoint: &Endpoint, db: &str, _statements: usize) -> Result<PgClient> {
        let mut client = postgres::Config::from(config(endpoint, db))
            .connect(postgres::NoTls)
            .with_context(|| format!("failed to connect to {endpoint:?} (database {db})"))?;
        let row = client.query_one("SHOW server_version_num", &[])?;
        let version_num = row.get::<_, String>(0).trim().parse().unwrap_or(0);
        Ok(PgClient {
            client: Some(client),
            in_block: false,
            version_num,
        })
    }

    fn prepare(&mut self, sql: &str) -> Result<Statement> {
        let sql = numbered(sql);
        (self.client().prepare(&sql)).with_context(|| format!("failed to prepare {sql}"))
    }

    fn begin(&mut self) -> Outcome {
        self.in_block = true;
        self.simple("BEGIN")
    }

    fn commit(&mut self) -> Outcome {
        let r = self.simple("COMMIT");
        self.in_block = false;
        r
    }

    /// Ends the transaction BEGIN opened; outside one there is nothing to end.
    fn rollback(&mut self) -> Outcome {
        match std::mem::take(&mut self.in_block) {
            true => self.simple("ROLLBACK"),
            false => Ok((false, 0)),
        }
    }

    fn text(&mut self, sql: &str) -> Outcome {
        self.simple(sql)
    }

    /// Bind and execute a prepared statement.
    fn exec(&mut self, statement: &Statement, params: Vec<Param>) -> Outcome {
        let owned: Vec<Typed> = params.into_iter().map(typed).collect();
        let read = !statement.columns().is_empty();
        let n = self
            .client()
            .execute(statement, &refs(&owned))
            .map_err(failed)?;
        Ok((read, n))
    }

    fn rows(
        &mut self,
        statement: &Statement,
        params: Vec<Param>,
    ) -> Result<Rows, (Failure, String)> {
        let owned: Vec<Typed> = params.into_iter().map(typed).collect();
        let rows = self
            .client()
            .query(statement, &refs(&owned))
            .map_err(failed)?;
        let width = statement.columns().len();
        (rows.iter())
            .map(|row| {
                (0..width)
                    .map(|i| row.try_get::<_, Cell>(i))
                    .collect::<Result<Vec<Cell>, _>>()
                    .map_err(failed)
            })
            .collect()
    }

    /// End the aborted transaction, as sysbench's driver does.
    fn recover(&mut self) -> Result<(), (Failure, String)> {
        if std::mem::take(&mut self.in_block) {
            self.client().batch_execute("ROLLBACK").map_err(failed)?;
        }
        Ok(())
    }

    fn id(&self) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            numbered("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(
            numbered("INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)"),
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES ($1, $2, $3, $4)"
        );
    }

    #[test]
    fn parameters_take_the_statements_types() {
        assert!(matches!(typed(Param::UInt(7)), Typed::Int(7)));
        assert!(matches!(typed(Param::UInt(u64::MAX)), Typed::Int(i32::MAX)));
        assert!(matches!(typed(Param::Text("ab".into())), Typed::Text(s) if s == "ab"));
    }
}
