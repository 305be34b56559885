//! Measurement: latency histograms, iteration statistics, server counters. Pure.

pub mod counters;
pub mod latency;
pub mod measurement;
pub mod stats;
pub mod welch;
