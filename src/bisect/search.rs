//! Which commit to measure next: the one nearest the middle of the commits between the last
//! known good and the first known bad, passing over those that were skipped.

use std::collections::BTreeMap;

use super::judge::Step;

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// Measure the commit at this index.
    Measure(usize),
    /// The first bad commit is at this index.
    Found(usize),
    /// Every commit between the last good and the first bad was skipped: the first bad one
    /// is among these and the first bad index.
    OnlySkipped(Vec<usize>, usize),
}

/// The commits after the good end, oldest first; the last is the bad end.
pub(crate) fn next(n: usize, known: &BTreeMap<usize, Step>) -> Next {
    assert!(
        n > 0,
        "invariant: the bad end is a commit after the good end"
    );
    // Known good: below `lo` (exclusive: None is the good end itself); known bad: `hi`.
    let hi = known
        .iter()
        .filter(|(_, s)| **s == Step::Bad)
        .map(|(i, _)| *i)
        .min()
        .unwrap_or(n - 1);
    let lo = known
        .iter()
        .filter(|(i, s)| **s == Step::Good && **i < hi)
        .map(|(i, _)| *i)
        .max();
    let first = lo.map_or(0, |l| l + 1);
    let open: Vec<usize> = (first..hi)
        .filter(|i| !matches!(known.get(i), Some(Step::Skipped)))
        .collect();
    if (first..hi).next().is_none() {
        return Next::Found(hi);
    }
    if open.is_empty() {
        return Next::OnlySkipped((first..hi).collect(), hi);
    }
    // The middle of the whole interval, then the open commit nearest it (the earlier on a tie).
    let mid = (first + hi - 1) / 2;
    let pick = *open
        .iter()
        .min_by_key(|i| (i.abs_diff(mid), **i))
        .expect("invariant: open is not empty");
    Next::Measure(pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bisect `n` commits whose first bad one is `culprit`, with `skip` not building: the
    /// indices measured and the outcome.
    fn run(n: usize, culprit: usize, skip: &[usize]) -> (Vec<usize>, Next) {
        let mut known = BTreeMap::new();
        known.insert(n - 1, Step::Bad);
        let mut measured = Vec::new();
        loop {
            match next(n, &known) {
                Next::Measure(i) => {
                    assert!(!known.contains_key(&i), "{i} measured twice");
                    measured.push(i);
                    let step = if skip.contains(&i) {
                        Step::Skipped
                    } else if i >= culprit {
                        Step::Bad
                    } else {
                        Step::Good
                    };
                    known.insert(i, step);
                }
                done => return (measured, done),
            }
        }
    }

    #[test]
    fn finds_every_culprit_in_at_most_ceil_log2_steps() {
        for n in 1..=33 {
            let bound = (n as f64).log2().ceil() as usize;
            for culprit in 0..n {
                let (measured, out) = run(n, culprit, &[]);
                assert_eq!(out, Next::Found(culprit), "n {n} culprit {culprit}");
                assert!(measured.len() <= bound, "n {n}: {measured:?}");
            }
        }
    }

    #[test]
    fn skipped_commits_are_passed_over_and_reported_when_nothing_else_is_left() {
        let (_, out) = run(7, 4, &[2]);
        assert_eq!(out, Next::Found(4));
        // The culprit itself does not build: its neighbours narrow it to it and the next.
        let (_, out) = run(7, 4, &[4]);
        assert_eq!(out, Next::OnlySkipped(vec![4], 5));
        let (_, out) = run(7, 3, &[1, 2, 3]);
        assert_eq!(out, Next::OnlySkipped(vec![1, 2, 3], 4));
    }
}
