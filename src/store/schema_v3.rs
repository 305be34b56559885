//! Schema version 3: TPC-C's rates per minute (results.csv's `nopm`, `tpmc`, `tpm`) as typed
//! columns of `iterations`, in the `iteration_metrics` view and in `units`. A row stored
//! before has none of them (no run before wrote them), so there is nothing to fill.
//!
//! Frozen once released, as every migration: a later change is a migration of its own.

/// results.csv's columns `iterations` gains.
pub(super) const ITERATION_COLUMNS: &[(&str, &str)] = &[
    ("nopm", "DOUBLE PRECISION"),
    ("tpmc", "DOUBLE PRECISION"),
    ("tpm", "DOUBLE PRECISION"),
];

/// The view again with the new columns (a view cannot gain a column in place), and their
/// units.
pub(super) const SQL: &str = "
    DROP VIEW iteration_metrics;
    CREATE VIEW iteration_metrics AS
    SELECT r.run_key, r.run_id, r.matrix_name AS matrix, r.started_at AS run_started_at,
        c.id AS cell_id, i.id AS iteration_id,
        c.server, c.config, c.engine, c.workload, c.kind, c.concurrency, c.rate,
        i.iteration, i.status, i.error, i.queries, i.seconds, i.qps, i.tps,
        i.lat_avg_ms, i.lat_p50_ms, i.lat_p95_ms, i.lat_p99_ms, i.lat_max_ms,
        i.errors, i.commits, i.srv_questions, i.srv_com_select, i.srv_com_insert,
        i.srv_com_update, i.srv_com_delete, i.srv_com_commit, i.started_at,
        i.reads, i.writes, i.others, i.reconnects, i.lat_min_ms, i.lat_p999_ms,
        i.thread_events_avg, i.thread_events_stddev, i.client_cpu_s, i.lat_percentiles,
        i.apdex, i.apdex_t_ms, i.srv_cpu_s, i.srv_cpu_us_per_op, i.srv_read_bytes,
        i.srv_write_bytes, i.achieved_rate, i.scheduled, i.late_starts, i.missed_starts,
        i.max_backlog, i.svc_avg_ms, i.svc_p99_ms, i.srv_ctx_switches, i.srv_fsyncs,
        i.docker_engine, i.beside_runs, i.host_cpu_pressure_pct, i.client_busy_pct,
        i.client_cores, i.pacer_late, i.srv_instructions, i.srv_timer_instructions,
        i.srv_instr_per_op, i.nopm, i.tpmc, i.tpm
    FROM iterations i JOIN cells c ON c.id = i.cell_id JOIN runs r ON r.id = c.run_id;
    INSERT INTO units (column_name, unit, meaning) VALUES
    ('nopm', 'orders/min', 'TPC-C: New-Orders committed per minute, from the schema (HammerDB''s NOPM)'),
    ('tpmc', 'transactions/min', 'TPC-C: New-Order transactions ended per minute, as the client counted'),
    ('tpm', 'transactions/min', 'TPC-C: transactions the server counted per minute (HammerDB''s TPM)');";
