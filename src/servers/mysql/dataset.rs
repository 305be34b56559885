//! The MySQL family's part in kept data sets (`servers::dataset`): which my.cnf settings
//! leave the data files alone, each table's checksum, and the seal in its own schema.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;

use super::MysqlClient;
use crate::servers::seal::Seal;
use crate::servers::Endpoint;

/// The schema the seal lives in (one row of JSON in `seal`).
const SEAL_SCHEMA: &str = "rmatrix_dataset";

/// Settings that change how the server runs, not what its files hold: a set prepared under
/// one value is the same set under another. Anything else (page size, file-per-table, row
/// format, character set, lower_case_table_names, encryption...) makes a set of its own.
const RUNTIME: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_instances",
    "innodb_buffer_pool_chunk_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_flush_neighbors",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_log_buffer_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_doublewrite",
    "innodb_adaptive_hash_index",
    "innodb_change_buffering",
    "innodb_thread_concurrency",
    "innodb_lru_scan_depth",
    "innodb_max_dirty_pages_pct",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_purge_threads",
    "innodb_page_cleaners",
    "innodb_spin_wait_delay",
    "innodb_sync_spin_loops",
    "innodb_stats_persistent",
    "innodb_lock_wait_timeout",
    "log_bin",
    "skip_log_bin",
    "disable_log_bin",
    "sync_binlog",
    "binlog_format",
    "binlog_row_image",
    "binlog_cache_size",
    "max_binlog_size",
    "binlog_commit_wait_count",
    "binlog_commit_wait_usec",
    "thread_handling",
    "thread_cache_size",
    "max_connections",
    "table_open_cache",
    "table_definition_cache",
    "performance_schema",
    "query_cache_type",
    "query_cache_size",
    "skip_name_resolve",
    "tmp_table_size",
    "max_heap_table_size",
    "sort_buffer_size",
    "join_buffer_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "key_buffer_size",
    "max_allowed_packet",
    "transaction_isolation",
    "tx_isolation",
    "general_log",
    "slow_query_log",
    "long_query_time",
];

/// Families of settings that all run-time: the thread pool's, the performance schema's.
const RUNTIME_PREFIXES: &[&str] = &["thread_pool_", "performance_schema_"];

pub(super) fn keeps_data_format(setting: &str) -> bool {
    let s = setting.strip_prefix("loose_").unwrap_or(setting);
    RUNTIME.contains(&s) || RUNTIME_PREFIXES.iter().any(|p| s.starts_with(p))
}

/// `CHECKSUM TABLE` of every base table of `schemas`.
pub(super) async fn checksums(
    endpoint: &Endpoint,
    schemas: &[String],
) -> Result<BTreeMap<String, String>> {
    let mut conn = endpoint.connect(None).await?;
    let mut out = BTreeMap::new();
    for schema in schemas {
        let tables: Vec<String> = conn
            .exec(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? \
                 AND table_type = 'BASE TABLE' ORDER BY table_name",
                (schema,),
            )
            .await?;
        for t in tables {
            let name = format!("`{}`.`{}`", quoted(schema), quoted(&t));
            let row: Option<(String, Option<u64>)> = conn
                .query_first(format!("CHECKSUM TABLE {name}"))
                .await
                .with_context(|| format!("failed to checksum {schema}.{t}"))?;
            let sum = row.and_then(|(_, s)| s).map(|s| s.to_string());
            out.insert(
                format!("{schema}.{t}"),
                sum.unwrap_or_else(|| "NULL".into()),
            );
        }
    }
    conn.disconnect().await?;
    Ok(out)
}

/// A name inside backquotes (the schemas are checked identifiers; a table name from the
/// server is quoted all the same).
fn quoted(name: &str) -> String {
    name.replace('`', "``")
}

pub(super) async fn write_seal(endpoint: &Endpoint, seal: &Seal) -> Result<()> {
    let mut conn = endpoint.connect(None).await?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {SEAL_SCHEMA}"))
        .await?;
    conn.query_drop(format!(
        "CREATE TABLE IF NOT EXISTS {SEAL_SCHEMA}.seal (seal LONGTEXT NOT NULL)"
    ))
    .await?;
    conn.query_drop(format!("DELETE FROM {SEAL_SCHEMA}.seal"))
        .await?;
    conn.exec_drop(
        format!("INSERT INTO {SEAL_SCHEMA}.seal VALUES (?)"),
        (serde_json::to_string(seal)?,),
    )
    .await?;
    conn.disconnect().await?;
    Ok(())
}

pub(super) async fn read_seal(endpoint: &Endpoint) -> Result<Option<Seal>> {
    let mut conn = endpoint.connect(None).await?;
    let exists: Option<u64> = conn
        .exec_first(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? \
             AND table_name = 'seal'",
            (SEAL_SCHEMA,),
        )
        .await?;
    let text: Option<String> = match exists {
        Some(1) => {
            conn.query_first(format!("SELECT seal FROM {SEAL_SCHEMA}.seal"))
                .await?
        }
        _ => None,
    };
    conn.disconnect().await?;
    match text {
        Some(t) => Ok(Some(
            serde_json::from_str(&t).context("the copy's seal is not one rmatrix wrote")?,
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_settings_keep_the_format_and_others_do_not() {
        for s in [
            "innodb_buffer_pool_size",
            "loose_thread_pool_size",
            "log_bin",
            "performance_schema_max_table_instances",
        ] {
            assert!(keeps_data_format(s), "{s}");
        }
        for s in [
            "innodb_page_size",
            "innodb_file_per_table",
            "innodb_default_row_format",
            "character_set_server",
            "lower_case_table_names",
            "innodb_encrypt_tables",
        ] {
            assert!(!keeps_data_format(s), "{s}");
        }
    }
}
