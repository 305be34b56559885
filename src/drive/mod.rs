//! Driving load: warmup, measured phase, workers and their results.

pub mod slap;
