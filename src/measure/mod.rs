//! Measurement: latency histograms, per-second intervals, server counters, CPU time.

pub mod cgroup;
pub mod counters;
pub mod cpu;
pub mod interval;
pub mod latency;
pub mod measurement;
pub mod operation;
pub mod seconds;
