//! oltp_insert's ids without auto_inc: sysbench's `rand.unique()` sequence, one per loaded
//! table set rather than one per phase, so that warm-up, measured phases, later iterations
//! and other cells on the same tables never insert an id twice (a duplicate key, 1062, is
//! not an error sysbench ignores: a client would stop). The sequence's offset and next index
//! are kept on the server beside the tables (each family's `SqlFamily::start_ids`, `keep`),
//! so every client process goes on from them.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rand::Rng;

use super::rand::unique;

/// Where the sequence is kept: one row, in the tables' schema.
pub(crate) const TABLE: &str = "rmatrix_oltp_unique";

/// A phase's view of the sequence: workers take indexes from `next`.
#[derive(Clone)]
pub(crate) struct Ids {
    next: Arc<AtomicU32>,
    offset: u32,
}

impl Ids {
    /// A sequence of its own, starting at index 0 (sysbench's per invocation).
    pub(crate) fn fresh() -> Ids {
        Ids {
            next: Arc::new(AtomicU32::new(0)),
            offset: rand::rng().random(),
        }
    }

    /// The next id (each call takes one index, as `rand.unique()` does).
    pub(crate) fn take(&self) -> u32 {
        unique(self.next.fetch_add(1, Ordering::Relaxed), self.offset)
    }

    /// Indexes taken so far (the next one to take).
    pub(crate) fn taken(&self) -> u32 {
        self.next.load(Ordering::Relaxed)
    }

    /// A kept sequence: its offset, and the next index to take.
    pub(crate) fn at(offset: u32, next: u32) -> Ids {
        Ids {
            next: Arc::new(AtomicU32::new(next)),
            offset,
        }
    }

    pub(crate) fn offset(&self) -> u32 {
        self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two phases of one sequence never give an id twice; two fresh ones start alike at
    /// index 0 (what made warm-up and measured phases collide).
    #[test]
    fn a_kept_sequence_goes_on_where_it_stopped() {
        let first = Ids::fresh();
        let a: Vec<u32> = (0..1000).map(|_| first.take()).collect();
        let second = Ids {
            next: Arc::new(AtomicU32::new(first.taken())),
            offset: first.offset,
        };
        let b: Vec<u32> = (0..1000).map(|_| second.take()).collect();
        let all: std::collections::HashSet<u32> = a.iter().chain(&b).copied().collect();
        assert_eq!(all.len(), 2000);
        let again = Ids {
            next: Arc::new(AtomicU32::new(0)),
            offset: first.offset,
        };
        assert_eq!(again.take(), a[0]);
    }
}
