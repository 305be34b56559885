//! A client connection to a MySQL-family server (the blocking `mysql` crate): the test's
//! statements prepared on the server for every table, each event's statements executed and
//! their failures classified as sysbench's MySQL driver does.

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Params, Statement};

use super::worker::{Failure, Session};
use crate::measure::interval::Counts;
use crate::servers::mysql::MysqlClient;
use crate::servers::Endpoint;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::sql::{kinds, prepared_tables, Dialect, Kind, Step};

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed, lock-wait timeout.
const IGNORED: [u16; 3] = [1213, 1020, 1205];
/// Connection-loss client errors after which sysbench reconnects, and MariaDB's
/// ER_CONNECTION_KILLED (1927), what a client killed mid-statement reads before the socket
/// closes.
const LOST: [u16; 5] = [2013, 2006, 2011, 2055, 1927];

pub(crate) struct MySession {
    conn: Conn,
    /// Prepared statements indexed by `(table - 1) * Kind::COUNT + kind`.
    stmts: Vec<Option<Statement>>,
}

fn classify(e: &mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(s) if IGNORED.contains(&s.code) => Failure::Ignored,
        mysql::Error::MySqlError(s) if LOST.contains(&s.code) => Failure::Lost,
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => Failure::Lost,
        _ => Failure::Fatal,
    }
}

impl MySession {
    /// The server's id of this connection.
    pub(crate) fn connection_id(&self) -> u32 {
        self.conn.connection_id()
    }
}

impl Session for MySession {
    const DIALECT: Dialect = Dialect::Mysql;

    fn open(endpoint: &Endpoint, spec: &OltpSpec) -> Result<MySession> {
        let tables = prepared_tables(spec);
        let kinds = kinds(spec);
        // The driver's statement cache must hold every statement: an evicted one is closed
        // on the server while this worker still executes it.
        let opts = endpoint
            .blocking_opts(Some(&spec.db))
            .stmt_cache_size(tables as usize * kinds.len() + 16);
        let mut conn =
            Conn::new(opts).with_context(|| format!("failed to connect to {endpoint:?}"))?;
        let mut stmts = vec![None; tables as usize * Kind::COUNT];
        for t in 1..=tables {
            for &k in &kinds {
                let sql = k.sql(t, spec);
                let s = conn
                    .prep(&sql)
                    .with_context(|| format!("failed to prepare {sql}"))?;
                stmts[(t as usize - 1) * Kind::COUNT + k.index()] = Some(s);
            }
        }
        Ok(MySession { conn, stmts })
    }

    fn execute(&mut self, plan: &mut Vec<Step>, st: &mut Counts) -> Result<(), (Failure, String)> {
        let conn = &mut self.conn;
        for step in plan.drain(..) {
            let res = match step {
                Step::Begin => conn.query_drop("BEGIN").map(|_| false),
                Step::Commit => conn.query_drop("COMMIT").map(|_| false),
                Step::Text(q) => conn.query_drop(q).map(|_| false),
                Step::Exec {
                    kind,
                    table,
                    params,
                } => {
                    let i = (table as usize - 1) * Kind::COUNT + kind.index();
                    let Some(stmt) = self.stmts.get(i).and_then(Option::as_ref) else {
                        return Err((Failure::Fatal, format!("{kind:?} is not prepared")));
                    };
                    let read = stmt.num_columns() > 0;
                    conn.exec_drop(stmt, Params::Positional(params))
                        .map(|_| read)
                }
            };
            match res {
                Ok(true) => st.reads += 1,
                Ok(false) if conn.affected_rows() > 0 => st.writes += 1,
                Ok(false) => st.others += 1,
                Err(e) => {
                    let text = e.to_string();
                    return Err((classify(&e), text));
                }
            }
        }
        Ok(())
    }
}
