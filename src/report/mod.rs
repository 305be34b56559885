//! Reporting: pivots and deltas (pure), Markdown through minijinja templates, SVG charts.

pub(crate) mod chart;
pub(crate) mod client_bound;
pub(crate) mod drift;
pub(crate) mod load_curve;
pub mod markdown;
pub(crate) mod mix;
pub(crate) mod operations;
pub(crate) mod pivot;
pub(crate) mod sharing;
pub(crate) mod summary;
