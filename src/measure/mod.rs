//! Measurement: latency histograms, per-second intervals, server counters, CPU time.

pub(crate) mod callgrind;
pub mod cgroup;
pub(crate) mod client;
pub(crate) mod counted;
pub(crate) mod counters;
pub(crate) mod cpu;
pub(crate) mod interval;
pub(crate) mod latency;
pub mod measurement;
pub(crate) mod operation;
pub(crate) mod pause;
pub(crate) mod perf_count;
pub(crate) mod pressure;
pub(crate) mod profile;
pub(crate) mod seconds;
pub mod server_seconds;
