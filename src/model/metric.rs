//! The metrics a report can show, with their unit and which direction is better.

use crate::model::row::ResultRow;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) unit: &'static str,
    pub(crate) higher_is_better: bool,
    pub(crate) decimals: usize,
    /// Counted, not timed (`counted: callgrind`): the same build gives the same number on
    /// any machine, judged by `stats::counted`.
    pub(crate) counted: bool,
    get: fn(&ResultRow) -> Option<f64>,
}

pub(crate) const METRICS: &[Metric] = &[
    Metric {
        name: "qps",
        title: "Throughput",
        unit: "queries/s",
        higher_is_better: true,
        decimals: 0,
        counted: false,
        get: |r| r.qps,
    },
    Metric {
        name: "tps",
        title: "Transactions",
        unit: "trx/s",
        higher_is_better: true,
        decimals: 0,
        counted: false,
        get: |r| r.tps,
    },
    Metric {
        name: "seconds",
        title: "Time to run all queries",
        unit: "s",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.seconds,
    },
    Metric {
        name: "lat_avg_ms",
        title: "Average latency",
        unit: "ms",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.lat_avg_ms,
    },
    Metric {
        name: "lat_p50_ms",
        title: "Median latency",
        unit: "ms",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.lat_p50_ms,
    },
    Metric {
        name: "lat_p95_ms",
        title: "95th percentile latency",
        unit: "ms",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.lat_p95_ms,
    },
    Metric {
        name: "lat_p99_ms",
        title: "99th percentile latency",
        unit: "ms",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.lat_p99_ms,
    },
    Metric {
        name: "lat_max_ms",
        title: "Maximum latency",
        unit: "ms",
        higher_is_better: false,
        decimals: 3,
        counted: false,
        get: |r| r.lat_max_ms,
    },
    Metric {
        name: "apdex",
        title: "Apdex",
        unit: "score",
        higher_is_better: true,
        decimals: 2,
        counted: false,
        get: |r| r.apdex,
    },
    Metric {
        name: "srv_cpu_us_per_op",
        title: "Server CPU per operation",
        unit: "us",
        higher_is_better: false,
        decimals: 2,
        counted: false,
        get: |r| r.srv_cpu_us_per_op,
    },
    Metric {
        name: "srv_instr_per_op",
        title: "Server instructions per operation",
        unit: "instructions",
        higher_is_better: false,
        decimals: 0,
        counted: true,
        get: |r| r.srv_instr_per_op,
    },
    Metric {
        name: "nopm",
        title: "New-Orders per minute (NOPM)",
        unit: "orders/min",
        higher_is_better: true,
        decimals: 0,
        counted: false,
        get: |r| r.nopm,
    },
    Metric {
        name: "tpmc",
        title: "New-Order transactions per minute (tpmC)",
        unit: "transactions/min",
        higher_is_better: true,
        decimals: 0,
        counted: false,
        get: |r| r.tpmc,
    },
    Metric {
        name: "errors",
        title: "Errors",
        unit: "errors",
        higher_is_better: false,
        decimals: 0,
        counted: false,
        get: |r| r.errors.map(|e| e as f64),
    },
];

impl Metric {
    pub(crate) fn find(name: &str) -> Option<&'static Metric> {
        METRICS.iter().find(|m| m.name == name)
    }
    pub(crate) fn names() -> Vec<&'static str> {
        METRICS.iter().map(|m| m.name).collect()
    }
    pub(crate) fn value(&self, row: &ResultRow) -> Option<f64> {
        (self.get)(row)
    }
    pub(crate) fn format(&self, v: f64) -> String {
        format!("{:.*}", self.decimals, v)
    }
}
