//! Measurement: latency histograms, iteration statistics, server counters. Pure.

pub mod counters;
pub mod cpu;
pub mod interval;
pub mod latency;
pub mod measurement;
pub mod stats;
pub mod welch;
