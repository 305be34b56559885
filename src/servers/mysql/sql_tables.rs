//! sysbench's sbtest tables in the MySQL dialect (`servers::sql::SqlTables`): `ENGINE`,
//! AUTO_INCREMENT and the keys in CREATE TABLE, rows in multi-row INSERTs, the secondary
//! index built after the load, every connection closed so that its quit is waited for.

use std::fmt::Write;

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::{quits, Mysql, MysqlClient};
use crate::servers::sql::{Row, SqlTables, Tables};
use crate::servers::Endpoint;

impl SqlTables for Mysql {
    type Conn = Conn;

    fn engine<'a>(chosen: Option<&'a str>, default: &'a str) -> Option<&'a str> {
        Some(chosen.unwrap_or(default))
    }

    const DATETIME: &'static str = "DATETIME";

    fn table_options(engine: Option<&str>) -> String {
        engine.map_or_else(String::new, |e| format!(" /*! ENGINE = {e} */"))
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
