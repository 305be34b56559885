//! A client connection to a PostgreSQL server (the blocking `postgres` crate), as sysbench's
//! pgsql driver makes one: the test's statements prepared on the server (`$1` placeholders)
//! for every table, BEGIN/COMMIT and oltp_insert's text INSERT as simple queries, and the
//! errors sysbench's driver ignores (deadlock 40P01, serialization failure 40001, unique
//! violation 23505) rolled back and the event restarted.

use anyhow::{Context, Result};
use mysql_async::Value;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, SimpleQueryMessage, Statement};

use crate::measure::interval::Counts;
use crate::servers::postgres::client::config;
use crate::servers::Endpoint;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::sql::{kinds, prepared_tables, Dialect, Kind, Step};
use crate::workloads::oltp::worker::{Failure, Session};

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

pub(crate) struct PgSession {
    /// Always there until dropped (`Drop` takes it).
    client: Option<Client>,
    /// Prepared statements indexed by `(table - 1) * Kind::COUNT + kind`.
    stmts: Vec<Option<Statement>>,
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

/// A parameter as the statement's type takes it: the ids and `k` are INTEGER (int4; a
/// range's upper end past the largest id is the largest int4, the same rows), `c` and `pad`
/// CHAR.
enum Param {
    Int(i32),
    Text(String),
}

fn param(v: Value) -> Result<Param, String> {
    match v {
        Value::UInt(u) => Ok(Param::Int(i32::try_from(u).unwrap_or(i32::MAX))),
        Value::Int(i) => Ok(Param::Int(i.clamp(i32::MIN as i64, i32::MAX as i64) as i32)),
        Value::Bytes(b) => String::from_utf8(b)
            .map(Param::Text)
            .map_err(|_| "a text parameter is not UTF-8".to_string()),
        other => Err(format!("no PostgreSQL parameter for {other:?}")),
    }
}

impl PgSession {
    /// The connection, for the driver's own statements between phases.
    pub(crate) fn client(&mut self) -> &mut Client {
        self.client.as_mut().expect("invariant: taken only by drop")
    }

    /// A simple query's affected rows (one round trip, one transaction outside BEGIN).
    fn simple(&mut self, q: &str) -> Result<u64, postgres::Error> {
        let msgs = self.client().simple_query(q)?;
        Ok(msgs
            .iter()
            .map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => *n,
                _ => 0,
            })
            .sum())
    }

    /// Bind and execute prepared statement `i`: whether it is a read, and the rows it
    /// returned or changed.
    fn exec(&mut self, i: usize, params: Vec<Value>) -> Result<(bool, u64), (Failure, String)> {
        let Some(stmt) = self.stmts.get(i).and_then(Option::as_ref) else {
            return Err((Failure::Fatal, format!("statement {i} is not prepared")));
        };
        let owned = (params.into_iter().map(param))
            .collect::<Result<Vec<Param>, String>>()
            .map_err(|e| (Failure::Fatal, e))?;
        let refs: Vec<&(dyn ToSql + Sync)> = owned
            .iter()
            .map(|p| match p {
                Param::Int(v) => v as &(dyn ToSql + Sync),
                Param::Text(s) => s as &(dyn ToSql + Sync),
            })
            .collect();
        let read = !stmt.columns().is_empty();
        let client = self.client.as_mut().expect("invariant: taken only by drop");
        match client.execute(stmt, &refs) {
            Ok(n) => Ok((read, n)),
            Err(e) => Err((classify(&e), e.to_string())),
        }
    }

    /// After an ignored error: end the aborted transaction, as sysbench's driver does.
    fn roll_back(&mut self) -> Result<(), (Failure, String)> {
        if std::mem::take(&mut self.in_block) {
            self.client()
                .batch_execute("ROLLBACK")
                .map_err(|e| (classify(&e), e.to_string()))?;
        }
        Ok(())
    }
}

/// The `postgres` crate closes a connection on a runtime of its own, which panics on a thread
/// that drives tokio (a driver future dropped between phases by the stall watchdog): closed
/// on a thread of its own, waited for.
impl Drop for PgSession {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

impl Session for PgSession {
    const DIALECT: Dialect = Dialect::Postgres;

    fn open(endpoint: &Endpoint, spec: &OltpSpec) -> Result<PgSession> {
        let mut client = postgres::Config::from(config(endpoint, &spec.db))
            .connect(postgres::NoTls)
            .with_context(|| format!("failed to connect to {endpoint:?} (database {})", spec.db))?;
        let row = client.query_one("SHOW server_version_num", &[])?;
        let version_num = row.get::<_, String>(0).trim().parse().unwrap_or(0);
        let mut stmts = vec![None; prepared_tables(spec) as usize * Kind::COUNT];
        for t in 1..=prepared_tables(spec) {
            for k in kinds(spec) {
                let sql = numbered(&k.sql(t, spec));
                let s = client
                    .prepare(&sql)
                    .with_context(|| format!("failed to prepare {sql}"))?;
                stmts[(t as usize - 1) * Kind::COUNT + k.index()] = Some(s);
            }
        }
        Ok(PgSession {
            client: Some(client),
            stmts,
            in_block: false,
            version_num,
        })
    }

    fn execute(&mut self, plan: &mut Vec<Step>, st: &mut Counts) -> Result<(), (Failure, String)> {
        for step in plan.drain(..) {
            let res = match step {
                Step::Begin => {
                    self.in_block = true;
                    self.simple("BEGIN").map(|n| (false, n))
                }
                Step::Commit => {
                    let r = self.simple("COMMIT").map(|n| (false, n));
                    self.in_block = false;
                    r
                }
                Step::Text(q) => self.simple(&q).map(|n| (false, n)),
                Step::Exec {
                    kind,
                    table,
                    params,
                } => {
                    let i = (table as usize - 1) * Kind::COUNT + kind.index();
                    match self.exec(i, params) {
                        Ok(r) => Ok(r),
                        Err((Failure::Ignored, text)) => {
                            self.roll_back()?;
                            return Err((Failure::Ignored, text));
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            match res {
                Ok((true, _)) => st.reads += 1,
                Ok((false, n)) if n > 0 => st.writes += 1,
                Ok((false, _)) => st.others += 1,
                Err(e) => {
                    let failure = classify(&e);
                    if matches!(failure, Failure::Ignored) {
                        self.roll_back()?;
                    }
                    return Err((failure, e.to_string()));
                }
            }
        }
        Ok(())
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
        let s = OltpSpec {
            random_points: 12,
            ..OltpSpec::default()
        };
        let q = numbered(&Kind::RandomPoints.sql(1, &s));
        assert!(q.ends_with("$11, $12)"), "{q}");
        assert_eq!(
            numbered(&Kind::Insert.sql(3, &s)),
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES ($1, $2, $3, $4)"
        );
    }

    #[test]
    fn parameters_take_the_statements_types() {
        assert!(matches!(param(Value::UInt(7)), Ok(Param::Int(7))));
        assert!(matches!(
            param(Value::UInt(u64::MAX)),
            Ok(Param::Int(i32::MAX))
        ));
        assert!(matches!(param(Value::Int(-5)), Ok(Param::Int(-5))));
        assert!(matches!(param(Value::Bytes(b"ab".to_vec())), Ok(Param::Text(s)) if s == "ab"));
        assert!(param(Value::NULL).is_err());
    }
}
