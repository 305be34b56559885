//! The MySQL family's counters once a second (`measure::server_seconds`): SHOW GLOBAL STATUS
//! on a blocking connection of their own, the counters a "why" question reads first.

use std::time::Duration;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;

use super::client::MysqlClient;
use crate::measure::counters::{self, Status};
use crate::measure::server_seconds::{CounterSource, Kind, Rules};
use crate::servers::Endpoint;

/// A read that takes longer is given up (the server is stalled; the phase goes on).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) struct StatusReader(mysql::Conn);

impl StatusReader {
    pub(crate) fn connect(endpoint: &Endpoint) -> Result<StatusReader> {
        let opts = endpoint
            .blocking_opts(None)
            // Given, so that the connection does not ask the server (a SELECT) for it.
            .max_allowed_packet(Some(16 << 20))
            .read_timeout(Some(READ_TIMEOUT))
            .write_timeout(Some(READ_TIMEOUT))
            .tcp_connect_timeout(Some(READ_TIMEOUT));
        let conn = mysql::Conn::new(opts)
            .with_context(|| format!("failed to connect to {endpoint:?} for its counters"))?;
        Ok(StatusReader(conn))
    }
}

impl CounterSource for StatusReader {
    fn read(&mut self) -> Result<Status> {
        let rows: Vec<(String, String)> = self.0.query("SHOW GLOBAL STATUS")?;
        Ok(counters::parse(rows))
    }

    fn rules(&self) -> Rules {
        Rules {
            // A SHOW GLOBAL STATUS counts itself in both.
            own_cost: &["Questions", "Com_show_status"],
            kind,
        }
    }
}

/// The counters kept: statements, rows, redo and data I/O, the buffer pool, the binlog,
/// row locks; and the levels among them.
fn kind(name: &str) -> Option<Kind> {
    const LEVELS: &[&str] = &[
        "Threads_running",
        "Threads_connected",
        "Innodb_buffer_pool_pages_dirty",
        "Innodb_buffer_pool_pages_free",
        "Innodb_history_list_length",
        "Innodb_row_lock_current_waits",
        "Binlog_snapshot_position",
    ];
    const COUNTS: &[&str] = &[
        "Questions",
        "Innodb_data_fsyncs",
        "Innodb_data_read",
        "Innodb_data_written",
        "Innodb_os_log_written",
        "Innodb_os_log_fsyncs",
        "Innodb_log_waits",
        "Innodb_buffer_pool_reads",
        "Innodb_buffer_pool_read_requests",
        "Innodb_buffer_pool_write_requests",
        "Innodb_buffer_pool_wait_free",
        "Innodb_buffer_pool_pages_flushed",
        "Innodb_row_lock_waits",
        "Innodb_row_lock_time",
        "Slow_queries",
        // Not Handler_read_rnd_next or Handler_tmp_write: each SHOW GLOBAL STATUS adds about
        // one per status row to them (scripts/bench/counter-read-cost.sh).
        "Handler_commit",
        "Handler_rollback",
        "Handler_write",
        "Handler_update",
        "Handler_delete",
        "Handler_read_key",
        "Handler_read_next",
    ];
    const COUNT_PREFIXES: &[&str] = &["Com_", "Innodb_rows_", "Binlog_"];
    if LEVELS.contains(&name) {
        Some(Kind::Level)
    } else if COUNTS.contains(&name) || COUNT_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some(Kind::Count)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_counters_that_explain_and_knows_the_levels() {
        assert_eq!(kind("Com_select"), Some(Kind::Count));
        assert_eq!(kind("Innodb_rows_inserted"), Some(Kind::Count));
        assert_eq!(kind("Binlog_group_commits"), Some(Kind::Count));
        assert_eq!(kind("Threads_running"), Some(Kind::Level));
        assert_eq!(kind("Binlog_snapshot_position"), Some(Kind::Level));
        assert_eq!(kind("Uptime"), None);
        assert_eq!(kind("Bytes_sent"), None);
    }
}
