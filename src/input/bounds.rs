//! Bounds on every size a matrix sets (columns, rows, counts, keyspaces, levels): a matrix
//! pasted from a blog post with a few digits too many is refused when it is read, at the
//! value, instead of allocating gigabytes or overflowing arithmetic in the middle of a run.

use std::ops::RangeInclusive;

/// A whole-number setting: its path (below the block being checked), value and valid range.
pub(crate) type Bounded<'a> = (&'a str, u64, RangeInclusive<u64>);

/// The first setting outside its range: its path, and a message that gives the range.
pub(crate) fn first_outside<'a>(settings: &[Bounded<'a>]) -> Option<(&'a str, String)> {
    let (at, v, range) = settings.iter().find(|(_, v, r)| !r.contains(v))?;
    let name = at.rsplit('.').next().unwrap_or(at);
    Some((
        *at,
        format!(
            "`{name}` is {v}: it must be from {} to {}",
            range.start(),
            range.end()
        ),
    ))
}

/// The most statements a count-based `length` or `warmup` may ask for (a million a second
/// for more than eleven days).
pub(crate) const MAX_QUERIES: u64 = 1_000_000_000_000;

/// The largest step of a `steps` shape (`load.shape.steps.pct`), in percent of the cell's rate.
pub(crate) const MAX_STEP_PCT: f64 = 1000.0;

/// The largest factor of a geometric sweep.
pub(crate) const MAX_FACTOR: f64 = 100.0;

/// Panels under a per-second chart's throughput and latency (`report.timeline_counters`).
pub(crate) const MAX_TIMELINE_COUNTERS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_setting_outside_its_range() {
        assert_eq!(first_outside(&[("a", 5, 1..=10), ("b", 0, 0..=1)]), None);
        assert_eq!(
            first_outside(&[("a", 5, 1..=10), ("x.b", 11, 1..=10), ("c", 0, 1..=2)]),
            Some(("x.b", "`b` is 11: it must be from 1 to 10".to_string()))
        );
    }
}
