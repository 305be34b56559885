//! sysbench's sbtest tables in its pgsql dialect (`servers::sql::SqlTables`): `id SERIAL`, no
//! storage engine, the keys built after the load, rows streamed with COPY.

use std::fmt::Write;
use std::io::Cursor;

use anyhow::{Context, Result};
use futures_util::SinkExt;
use tokio_postgres::Client;

use super::client::{connect, ensure_database};
use super::Postgres;
use crate::servers::sql::{Row, SqlTables, Tables};
use crate::servers::Endpoint;

impl SqlTables for Postgres {
    type Conn = Client;

    /// No storage engine here: `mysql_storage_engine` is sysbench's MySQL option.
    fn engine<'a>(_: Option<&'a str>, _: &'a str) -> Option<&'a str> {
        None
    }

    const DATETIME: &'static str = "TIMESTAMP";

    fn table_options(_: Option<&str>) -> String {
        String::new()
    }

    async fn open_db(endpoint: &Endpoint, db: &str) -> Result<Client> {
        ensure_database(endpoint, db).await?;
        connect(endpoint, db).await
    }

    async fn connect(endpoint: &Endpoint, db: &str) -> Result<Client> {
        connect(endpoint, db).await
    }

    /// Dropped: its backend's exit is waited for by `Control::settled`.
    async fn close(conn: Client) {
        drop(conn);
    }

    /// No marker table yet is an error: nothing loaded.
    async fn marker(conn: &mut Client, marker: &str, last: &str) -> Option<String> {
        conn.query_opt(
            &format!("SELECT signature FROM {marker} WHERE to_regclass($1) IS NOT NULL"),
            &[&last],
        )
        .await
        .ok()
        .flatten()
        .map(|r| r.get(0))
    }

    async fn create_tables(conn: &mut Client, tables: &Tables<'_>, marker: &str) -> Result<()> {
        let mut ddl = format!("DROP TABLE IF EXISTS {marker};");
        for n in 1..=tables.count {
            ddl.push_str(&format!(
                "DROP TABLE IF EXISTS sbtest{n}; {};",
                create_table(tables, n)
            ));
        }
        conn.batch_execute(&ddl)
            .await
            .context("failed to create the sbtest tables")
    }

    /// One COPY for the run of chunks, a chunk per message.
    async fn load(
        conn: &mut Client,
        n: u32,
        chunks: &[(u32, u32)],
        rows: &mut (dyn FnMut(u32, u32) -> Vec<Row> + Send),
        sent: &(dyn Fn() + Sync),
    ) -> Result<()> {
        let (Some(&(from, _)), Some(&(_, to))) = (chunks.first(), chunks.last()) else {
            return Ok(());
        };
        let copy = format!("COPY sbtest{n} (id, k, c, pad) FROM STDIN");
        let sink = conn.copy_in::<_, Cursor<Vec<u8>>>(&copy).await?;
        futures_util::pin_mut!(sink);
        let mut text = String::new();
        for &(first, last) in chunks {
            copy_rows(&rows(first, last), &mut text);
            sink.send(Cursor::new(text.as_bytes().to_vec()))
                .await
                .with_context(|| format!("failed to load sbtest{n} rows {first}..{last}"))?;
            sent();
        }
        sink.finish()
            .await
            .with_context(|| format!("failed to load sbtest{n} rows {from}..{to}"))?;
        Ok(())
    }

    /// Its key on id, sysbench's `k_N` with `create_secondary`, and with SERIAL the sequence
    /// moved past the loaded ids (sysbench's prepare lets SERIAL number the rows; the
    /// loaders give explicit ids to load in parallel).
    fn after_load(tables: &Tables<'_>, n: u32) -> Vec<String> {
        let mut out = vec![if tables.secondary {
            format!("CREATE INDEX xid_{n} ON sbtest{n}(id)")
        } else {
            format!("ALTER TABLE sbtest{n} ADD PRIMARY KEY (id)")
        }];
        if tables.create_secondary {
            out.push(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"));
        }
        if tables.auto_inc && tables.rows > 0 {
            out.push(format!(
                "SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {})",
                tables.rows
            ));
        }
        out
    }

    async fn execute(conn: &mut Client, sql: &str) -> Result<()> {
        Ok(conn.batch_execute(sql).await?)
    }

    async fn remember(conn: &mut Client, marker: &str, text: &str) -> Result<()> {
        conn.batch_execute(&format!(
            "CREATE TABLE {marker}(signature VARCHAR(512) NOT NULL)"
        ))
        .await?;
        conn.execute(&format!("INSERT INTO {marker} VALUES ($1)"), &[&text])
            .await?;
        Ok(())
    }

    async fn start_ids(conn: &mut Client, seq: &str, offset: u32) -> Result<()> {
        conn.batch_execute(&format!(
            "DROP TABLE IF EXISTS {seq}; \
             CREATE TABLE {seq}(id_offset BIGINT NOT NULL, next_index BIGINT NOT NULL)"
        ))
        .await?;
        let offset = i64::from(offset);
        conn.execute(&format!("INSERT INTO {seq} VALUES ($1, 0)"), &[&offset])
            .await
            .context("failed to start oltp_insert's id sequence")?;
        Ok(())
    }
}

/// CREATE TABLE as sysbench writes it for pgsql, without its key: `PRIMARY KEY (id)` (or
/// with `secondary` a plain index on id, sysbench's MySQL `KEY xid`, which PostgreSQL's
/// CREATE TABLE has no spelling for) is added once the rows are in (`after_load`).
fn create_table(tables: &Tables<'_>, n: u32) -> String {
    let id = if tables.auto_inc {
        "SERIAL"
    } else {
        "INTEGER NOT NULL"
    };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
    )
}

/// Rows in COPY's text format (tab-separated, one per line): the digits and dashes of `c`
/// and `pad` need no escaping.
fn copy_rows(rows: &[Row], out: &mut String) {
    out.clear();
    for (id, k, c, pad) in rows {
        let _ = writeln!(out, "{id}\t{k}\t{c}\t{pad}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Tables<'static> {
        Tables {
            db: "sbtest",
            count: 1,
            rows: 10_000,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            engine: None,
        }
    }

    #[test]
    fn ddl_is_sysbenchs_pgsql_ddl() {
        assert_eq!(
            create_table(&tables(), 3),
            "CREATE TABLE sbtest3(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
        );
        assert_eq!(
            Postgres::after_load(&tables(), 3),
            [
                "ALTER TABLE sbtest3 ADD PRIMARY KEY (id)",
                "CREATE INDEX k_3 ON sbtest3(k)",
                "SELECT setval(pg_get_serial_sequence('sbtest3', 'id'), 10000)"
            ]
        );
        let t = Tables {
            auto_inc: false,
            secondary: true,
            create_secondary: false,
            ..tables()
        };
        assert!(create_table(&t, 1).contains("id INTEGER NOT NULL,"));
        assert_eq!(
            Postgres::after_load(&t, 1),
            ["CREATE INDEX xid_1 ON sbtest1(id)"]
        );
    }

    #[test]
    fn copy_rows_are_tab_separated_lines() {
        let rows: Vec<Row> = (11..=20)
            .map(|id| (id, 7, "c".into(), "p".into()))
            .collect();
        let mut out = String::new();
        copy_rows(&rows, &mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[9], "20\t7\tc\tp");
    }
}
