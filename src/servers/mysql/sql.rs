//! The MySQL family's part in a benchmark iteration (`servers::sql`): sysbench's sbtest
//! tables in its dialect (`ENGINE`, AUTO_INCREMENT, keys in CREATE TABLE, rows in multi-row
//! INSERTs), and its counters read on a control connection: SHOW GLOBAL STATUS counts a
//! client's statements as they run, but a closed client's COM_QUIT counts in Questions when
//! the server gets to it, so every closed connection is waited for.

use std::fmt::Write;

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::sql_client::MyClient;
use super::{measured, quits, status, wait_disconnected, Mysql, MysqlClient};
use crate::measure::counters::Status;
use crate::servers::sql::{Kept, Row, SqlFamily, Tables, WithSql};
use crate::servers::Endpoint;

/// The control connection once the clients are connected.
pub(crate) struct MyControl(Conn);

impl SqlFamily for Mysql {
    type Client = MyClient;
    type Conn = Conn;
    type Settled = ();
    type Control = MyControl;
    type Flushed = ();
    const COUNTED_AT_EXIT: bool = false;

    fn engine<'a>(chosen: Option<&'a str>, default: &'a str) -> Option<&'a str> {
        Some(chosen.unwrap_or(default))
    }

    async fn open_db(endpoint: &Endpoint, db: &str) -> Result<Conn> {
        let mut conn = endpoint.connect(None).await?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
            .await
            .with_context(|| format!("failed to create schema {db}"))?;
        conn.query_drop(format!("USE `{db}`")).await?;
        Ok(conn)
    }

    async fn connect(endpoint: &Endpoint, db: &str) -> Result<Conn> {
        endpoint.connect(Some(db)).await
    }

    /// Closed, not dropped: a dropped connection is cleaned up in the background and its
    /// statements could land inside the measured window.
    async fn close(conn: Conn) {
        quits::close(conn).await;
    }

    async fn marker(conn: &mut Conn, marker: &str, last: &str) -> Option<String> {
        conn.query_first(format!(
            "SELECT signature FROM {marker} WHERE EXISTS (SELECT 1 FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = '{last}')"
        ))
        .await
        .unwrap_or(None)
    }

    async fn create_tables(conn: &mut Conn, tables: &Tables<'_>, marker: &str) -> Result<()> {
        conn.query_drop(format!("DROP TABLE IF EXISTS {marker}"))
            .await?;
        for n in 1..=tables.count {
            conn.query_drop(format!("DROP TABLE IF EXISTS sbtest{n}"))
                .await?;
            let ddl = create_table(tables, n);
            conn.query_drop(&ddl)
                .await
                .with_context(|| format!("failed: {ddl}"))?;
        }
        Ok(())
    }

    /// One multi-row INSERT a chunk, with explicit ids, so that several connections can load
    /// one table in parallel and still get sysbench's 1..N.
    async fn load(
        conn: &mut Conn,
        n: u32,
        chunks: &[(u32, u32)],
        rows: &mut (dyn FnMut(u32, u32) -> Vec<Row> + Send),
        sent: &(dyn Fn() + Sync),
    ) -> Result<()> {
        for &(first, last) in chunks {
            let q = insert_rows(n, &rows(first, last));
            conn.query_drop(q)
                .await
                .with_context(|| format!("failed to load sbtest{n} rows {first}..{last}"))?;
            sent();
        }
        Ok(())
    }

    /// The secondary index, built after the load as sysbench does.
    fn after_load(tables: &Tables<'_>, n: u32) -> Vec<String> {
        match tables.create_secondary {
            true => vec![create_index(n)],
            false => Vec::new(),
        }
    }

    async fn execute(conn: &mut Conn, sql: &str) -> Result<()> {
        Ok(conn.query_drop(sql).await?)
    }

    async fn remember(conn: &mut Conn, marker: &str, text: &str) -> Result<()> {
        conn.query_drop(format!(
            "CREATE TABLE {marker}(signature VARCHAR(512) NOT NULL)"
        ))
        .await?;
        conn.exec_drop(format!("INSERT INTO {marker} VALUES (?)"), (text,))
            .await?;
        Ok(())
    }

    async fn start_ids(conn: &mut Conn, seq: &str, offset: u32) -> Result<()> {
        conn.query_drop(format!("DROP TABLE IF EXISTS {seq}"))
            .await?;
        conn.query_drop(format!(
            "CREATE TABLE {seq}(id_offset INT UNSIGNED NOT NULL, next_index INT UNSIGNED NOT NULL)"
        ))
        .await?;
        conn.exec_drop(format!("INSERT INTO {seq} VALUES (?, 0)"), (offset,))
            .await
            .context("failed to start oltp_insert's id sequence")
    }

    async fn settle(_: &Endpoint, _: &str, _: Option<&str>) -> Result<()> {
        Ok(())
    }

    /// Connected after the clients, it waits for the connections closed before them (the
    /// load's, the last iteration's) to leave; the id sequence is read on it.
    async fn control(
        _: (),
        endpoint: &Endpoint,
        db: &str,
        clients: &[u32],
        seq: Option<&str>,
    ) -> Result<(MyControl, Option<Kept>)> {
        let mut control = endpoint.connect(Some(db)).await?;
        quits::settle(&mut control, clients).await;
        let ids = match seq {
            Some(seq) => Some(resume(&mut control, seq).await?),
            None => None,
        };
        Ok((MyControl(control), ids))
    }

    /// After every phase, even one that failed: the indexes its clients took are used.
    async fn warmed_up(control: &mut MyControl, seq: Option<&str>, next: u32) -> Result<()> {
        match seq {
            Some(seq) => keep(&mut control.0, seq, next).await,
            None => Ok(()),
        }
    }

    fn flush(_: Vec<&mut MyClient>) -> Result<()> {
        Ok(())
    }

    async fn before(control: &mut MyControl, _: ()) -> Result<Status> {
        status(&mut control.0).await
    }

    async fn after(control: &mut MyControl) -> Result<Status> {
        status(&mut control.0).await
    }

    async fn keep(
        control: &mut MyControl,
        _: &Endpoint,
        _: &str,
        seq: &str,
        next: u32,
    ) -> Result<()> {
        keep(&mut control.0, seq, next).await
    }

    /// Counters that moved, and always the ones compared (and rollbacks, which the
    /// deadlock accounting reads).
    fn measured(before: &Status, after: &Status, reads: u64) -> Status {
        measured(before, after, &["Com_rollback"], reads)
    }

    /// Dropping a client sends COM_QUIT without waiting, and the server counts a COM_QUIT
    /// in Questions: its late quits would land in the next iteration's counters.
    async fn close_control(control: MyControl, clients: &[u32]) {
        let mut control = control.0;
        wait_disconnected(&mut control, clients).await;
        quits::close(control).await;
    }
}

/// The sequence where the last phase on these tables left it.
async fn resume(conn: &mut Conn, seq: &str) -> Result<Kept> {
    let row: Option<Kept> = conn
        .query_first(format!("SELECT id_offset, next_index FROM {seq}"))
        .await
        .with_context(|| {
            format!("failed to read oltp_insert's id sequence ({seq}): drop the schema to reload")
        })?;
    row.with_context(|| format!("{seq} is empty: drop the schema to reload"))
}

async fn keep(conn: &mut Conn, seq: &str, next: u32) -> Result<()> {
    conn.exec_drop(format!("UPDATE {seq} SET next_index = ?"), (next,))
        .await
        .context("failed to keep oltp_insert's id sequence")
}

/// CREATE TABLE as sysbench writes it (`secondary` makes `id` a plain key).
pub(crate) fn create_table(tables: &Tables<'_>, n: u32) -> String {
    let id = if tables.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if tables.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    let engine = tables.engine.unwrap_or_default();
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  \
         {key} (id)\n) /*! ENGINE = {engine} */"
    )
}

fn create_index(n: u32) -> String {
    format!("CREATE INDEX k_{n} ON sbtest{n}(k)")
}

/// One multi-row INSERT of `rows` into table `n`.
fn insert_rows(n: u32, rows: &[Row]) -> String {
    let mut q = String::with_capacity(64 + rows.len() * 200);
    let _ = write!(q, "INSERT INTO sbtest{n}(id, k, c, pad) VALUES ");
    for (i, (id, k, c, pad)) in rows.iter().enumerate() {
        if i > 0 {
            q.push(',');
        }
        let _ = write!(q, "({id},{k},'{c}','{pad}')");
    }
    q
}

/// The family for `ServerKind::with_sql`.
pub(crate) fn with_sql<W: WithSql>(what: W) -> Option<W::Output> {
    Some(what.with::<Mysql>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(engine: &str) -> Tables<'_> {
        Tables {
            db: "sbtest",
            count: 1,
            rows: 10_000,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            engine: Some(engine),
        }
    }

    #[test]
    fn ddl_matches_sysbench() {
        assert_eq!(
            create_table(&tables("innodb"), 3),
            "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  \
             k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  \
             pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        let t = Tables {
            auto_inc: false,
            secondary: true,
            ..tables("MyISAM")
        };
        let ddl = create_table(&t, 1);
        assert!(ddl.contains("id INTEGER NOT NULL,"), "{ddl}");
        assert!(ddl.contains("KEY xid (id)"), "{ddl}");
        assert!(ddl.ends_with("/*! ENGINE = MyISAM */"));
        assert_eq!(create_index(2), "CREATE INDEX k_2 ON sbtest2(k)");
    }

    #[test]
    fn bulk_insert_has_every_id_once() {
        let rows: Vec<Row> = (11..=20)
            .map(|id| (id, 5, "c".into(), "p".into()))
            .collect();
        let q = insert_rows(1, &rows);
        assert!(q.starts_with("INSERT INTO sbtest1(id, k, c, pad) VALUES (11,5,'c','p'),"));
        assert_eq!(q.matches("),(").count(), 9);
        assert!(q.contains("),(20,"));
    }
}
