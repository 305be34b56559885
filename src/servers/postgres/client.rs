//! Connections to a PostgreSQL server: async (tokio-postgres) for the orchestrator and the
//! native driver's control; `config` for the blocking clients (postgres) of client threads.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::servers::Endpoint;

/// The database the family's own queries run in: its counters and waits are read there,
/// so that they never count in a benchmark database's `pg_stat_database` row.
pub(crate) const CONTROL_DB: &str = "postgres";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The connection settings for `db` on the endpoint (TCP, no TLS: 127.0.0.1 or a bridge).
pub(crate) fn config(endpoint: &Endpoint, db: &str) -> tokio_postgres::Config {
    let mut c = tokio_postgres::Config::new();
    c.host(&endpoint.host)
        .port(endpoint.port)
        .user(&endpoint.user)
        .password(&endpoint.password)
        .dbname(db)
        .application_name("rmatrix")
        .connect_timeout(CONNECT_TIMEOUT);
    c
}

/// A connection to `db`, its I/O task spawned on the current runtime.
pub(crate) async fn connect(endpoint: &Endpoint, db: &str) -> Result<tokio_postgres::Client> {
    let (client, conn) = config(endpoint, db)
        .connect(tokio_postgres::NoTls)
        .await
        .with_context(|| format!("failed to connect to {endpoint:?} (database {db})"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// `name` as an SQL identifier: double-quoted, a quote doubled.
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Create database `db` when the server has none of that name.
pub(crate) async fn ensure_database(endpoint: &Endpoint, db: &str) -> Result<()> {
    let control = connect(endpoint, CONTROL_DB).await?;
    let found = control
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&db])
        .await?;
    if found.is_none() {
        control
            .batch_execute(&format!("CREATE DATABASE {}", ident(db)))
            .await
            .with_context(|| format!("failed to create database {db}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(super::ident("sbtest"), "\"sbtest\"");
        assert_eq!(super::ident("a\"; DROP"), "\"a\"\"; DROP\"");
    }
}
