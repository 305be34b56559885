//! Reporting: metrics, pivots and deltas (pure), Markdown through minijinja templates.

pub mod markdown;
pub mod metric;
pub mod pivot;
