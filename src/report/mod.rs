//! Reporting: metrics, pivots and deltas (pure), Markdown through minijinja templates.

pub mod chart;
pub mod escape;
pub mod markdown;
pub mod metric;
pub mod pivot;
