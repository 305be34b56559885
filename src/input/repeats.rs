//! The first value a list repeats, in one pass: axes may be long (a matrix may expand to
//! 100,000 cells along one of them), and comparing each value with all before it is quadratic.

use std::collections::HashSet;
use std::hash::Hash;

/// The index of the first item equal to an earlier one.
pub(crate) fn first_repeat<T: Hash + Eq>(items: &[T]) -> Option<usize> {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().position(|item| !seen.insert(item))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_of_two_equal_items() {
        assert_eq!(first_repeat(&[1, 2, 3]), None);
        assert_eq!(first_repeat(&[1, 2, 1, 2]), Some(2));
        assert_eq!(first_repeat::<u8>(&[]), None);
    }
}
