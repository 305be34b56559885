//! Reporting: pivots and deltas (pure), Markdown through minijinja templates, SVG charts.

pub mod chart;
pub mod drift;
pub mod load_curve;
pub mod markdown;
pub mod operations;
pub mod pivot;
pub mod summary;
