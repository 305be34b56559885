//! The Redis family's counters once a second (`measure::server_seconds`): `INFO all` on a
//! blocking connection of its own (stats, persistence, clients, memory, commandstats).

use std::time::Duration;

use anyhow::{Context, Result};

use super::control::{blocking, info_fields};
use super::{parse_commandstats, Addr};
use crate::measure::counters::Status;
use crate::measure::server_seconds::{CounterSource, Kind, Rules};

/// A read that takes longer is given up (the server is stalled; the phase goes on).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) struct InfoReader(redis::Connection);

impl InfoReader {
    pub(crate) fn connect(addr: &Addr, password: &str) -> Result<InfoReader> {
        let conn = blocking(addr, password, READ_TIMEOUT)
            .with_context(|| format!("failed to connect to {addr} for its counters"))?;
        Ok(InfoReader(conn))
    }
}

impl CounterSource for InfoReader {
    fn read(&mut self) -> Result<Status> {
        let bytes: Vec<u8> = redis::cmd("INFO").arg("all").query(&mut self.0)?;
        Ok(parse(&String::from_utf8_lossy(&bytes)))
    }

    fn rules(&self) -> Rules {
        Rules {
            // Redis counts a command once it has run: each INFO shows in the next one.
            own_cost: &[
                "total_commands_processed",
                "cmdstat_info",
                "total_reads_processed",
                "total_writes_processed",
            ],
            kind,
        }
    }
}

/// INFO's whole-number fields, and commandstats as `parse_commandstats` names them.
fn parse(text: &str) -> Status {
    let mut out: Status = info_fields(text)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("cmdstat_"))
        .filter_map(|(k, v)| v.parse::<u64>().ok().map(|n| (k, n)))
        .collect();
    out.extend(parse_commandstats(text));
    out
}

/// The fields kept, and the levels among them.
fn kind(name: &str) -> Option<Kind> {
    const LEVELS: &[&str] = &[
        "connected_clients",
        "blocked_clients",
        "used_memory",
        "used_memory_rss",
        "rdb_changes_since_last_save",
        "rdb_bgsave_in_progress",
        "aof_rewrite_in_progress",
        "aof_current_size",
        "aof_buffer_length",
    ];
    const COUNTS: &[&str] = &[
        "total_commands_processed",
        "total_connections_received",
        "total_net_input_bytes",
        "total_net_output_bytes",
        "keyspace_hits",
        "keyspace_misses",
        "expired_keys",
        "evicted_keys",
        "rejected_connections",
        "total_reads_processed",
        "total_writes_processed",
        "total_error_replies",
        "total_forks",
        "rdb_saves",
        "aof_rewrites",
    ];
    if LEVELS.contains(&name) {
        Some(Kind::Level)
    } else if COUNTS.contains(&name) || name.starts_with("cmdstat_") {
        Some(Kind::Count)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_all_as_counters() {
        let text = "# Stats\r\ntotal_commands_processed:42\r\ninstantaneous_input_kbps:0.01\r\n\
                    # Commandstats\r\ncmdstat_get:calls=7,usec=21,usec_per_call=3.00\r\n\
                    # Memory\r\nused_memory:1024\r\n";
        let s = parse(text);
        assert_eq!(s.get("total_commands_processed"), Some(&42));
        assert_eq!(s.get("cmdstat_get"), Some(&7));
        assert_eq!(s.get("cmdstat_get.usec"), Some(&21));
        assert_eq!(
            s.get("instantaneous_input_kbps"),
            None,
            "not a whole number"
        );
        assert_eq!(kind("used_memory"), Some(Kind::Level));
        assert_eq!(kind("cmdstat_get.usec"), Some(Kind::Count));
        assert_eq!(kind("uptime_in_seconds"), None);
    }
}
