//! A client connection to a MySQL-family server (the blocking `mysql` crate), as sysbench's
//! MySQL driver makes one: statements prepared on the server, and failures classified as
//! its defaults do.

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Params, Statement, Value};

use super::MysqlClient;
use crate::servers::sql::{decimal, AutoId, Cell, Failure, Outcome, Param, Rows, SqlClient};
use crate::servers::Endpoint;

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed, lock-wait timeout.
const IGNORED: [u16; 3] = [1213, 1020, 1205];
/// Connection-loss client errors after which sysbench reconnects, and MariaDB's
/// ER_CONNECTION_KILLED (1927), what a client killed mid-statement reads before the socket
/// closes.
const LOST: [u16; 5] = [2013, 2006, 2011, 2055, 1927];

pub(crate) struct MyClient {
    conn: Conn,
}

fn classify(e: &mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(s) if IGNORED.contains(&s.code) => Failure::Ignored,
        mysql::Error::MySqlError(s) if LOST.contains(&s.code) => Failure::Lost,
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => Failure::Lost,
        _ => Failure::Fatal,
    }
}

fn value(p: Param) -> Value {
    match p {
        Param::UInt(v) => Value::UInt(v),
        Param::Text(s) => Value::Bytes(s.into_bytes()),
        Param::Fixed(hundredths) => Value::Bytes(decimal(hundredths, 2).into_bytes()),
    }
}

/// A column as the binary protocol sends it: DECIMAL as its text.
fn cell(v: Value) -> Cell {
    match v {
        Value::NULL => Cell::Null,
        Value::Int(i) => Cell::Int(i),
        Value::UInt(u) => i64::try_from(u).map_or(Cell::Other, Cell::Int),
        Value::Bytes(b) => Cell::Text(String::from_utf8_lossy(&b).into_owned()),
        Value::Float(_) | Value::Double(_) | Value::Date(..) | Value::Time(..) => Cell::Other,
    }
}

impl MyClient {
    /// A statement's result: rows changed, read after it.
    fn outcome(&self, sent: mysql::Result<bool>) -> Outcome {
        match sent {
            Ok(read) => Ok((read, self.conn.affected_rows())),
            Err(e) => Err((classify(&e), e.to_string())),
        }
    }
}

impl SqlClient for MyClient {
    type Statement = Statement;
    const AUTO_ID: AutoId = AutoId::Zero;

    fn open(endpoint: &Endpoint, db: &str, statements: usize) -> Result<MyClient> {
        // The driver's statement cache must hold every statement: an evicted one is closed
        // on the server while this client still executes it.
        let opts = endpoint
            .blocking_opts(Some(db))
            .stmt_cache_size(statements + 16);
        let conn = Conn::new(opts).with_context(|| format!("failed to connect to {endpoint:?}"))?;
        Ok(MyClient { conn })
    }

    fn prepare(&mut self, sql: &str) -> Result<Statement> {
        (self.conn.prep(sql)).with_context(|| format!("failed to prepare {sql}"))
    }

    fn begin(&mut self) -> Outcome {
        let sent = self.conn.query_drop("BEGIN").map(|_| false);
        self.outcome(sent)
    }

    fn commit(&mut self) -> Outcome {
        let sent = self.conn.query_drop("COMMIT").map(|_| false);
        self.outcome(sent)
    }

    fn rollback(&mut self) -> Outcome {
        let sent = self.conn.query_drop("ROLLBACK").map(|_| false);
        self.outcome(sent)
    }

    fn text(&mut self, sql: &str) -> Outcome {
        let sent = self.conn.query_drop(sql).map(|_| false);
        self.outcome(sent)
    }

    fn exec(&mut self, statement: &Statement, params: Vec<Param>) -> Outcome {
        let read = statement.num_columns() > 0;
        let params = Params::Positional(params.into_iter().map(value).collect());
        let sent = self.conn.exec_drop(statement, params).map(|_| read);
        self.outcome(sent)
    }

    fn rows(
        &mut self,
        statement: &Statement,
        params: Vec<Param>,
    ) -> Result<Rows, (Failure, String)> {
        let params = Params::Positional(params.into_iter().map(value).collect());
        let got: mysql::Result<Vec<mysql::Row>> = self.conn.exec(statement, params);
        let rows = got.map_err(|e| (classify(&e), e.to_string()))?;
        Ok((rows.into_iter())
            .map(|r| r.unwrap().into_iter().map(cell).collect())
            .collect())
    }

    /// The server has rolled the transaction back already.
    fn recover(&mut self) -> Result<(), (Failure, String)> {
        Ok(())
    }

    fn id(&self) -> Option<u32> {
        Some(self.conn.connection_id())
    }
}
