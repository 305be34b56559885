//! Duet rounds whose two sides did not get the same CPU. In a duet both servers run at once,
//! each with its load on a CPU of its own, so that whatever slows the host slows both; but
//! another process that lands on one side's CPU for part of a round slows that side alone,
//! and no pairing cancels it. Beside a build on this 2-vCPU machine, such rounds ran one side
//! up to twice as fast as the other (per-round ratios off by 30%), in many rounds.
//!
//! Each side's server CPU share in the window (its CPU seconds over the window's) tells
//! them apart: a change in the server's code moves every round's split of CPU between the
//! sides alike, a neighbour only the rounds it ran in. A round is uneven when its split,
//! ln(B's share / A's), departs from the median round's by more than [`UNEVEN_SPLIT`]; its
//! ratio is set aside. The sides trade CPUs every other round, so a neighbour that favours
//! one CPU sets aside rounds of both signs and the median split stays the change's own.

/// A round's split may depart this far (5%, on the log scale) from the median round's.
pub(crate) const UNEVEN_SPLIT: f64 = 0.05;

/// The rounds (as given) whose split departs from the median's by more than
/// [`UNEVEN_SPLIT`]; none under 3 rounds (no median to go by). A split is ln(B / A) of the
/// two sides' server CPU shares; rounds without one are never uneven.
pub(crate) fn uneven_rounds(splits: &[(u32, f64)]) -> Vec<u32> {
    let Some(median) = super::located::median_of_rounds(splits.iter().map(|x| x.1)) else {
        return Vec::new();
    };
    splits
        .iter()
        .filter(|(_, x)| (x - median).abs() > UNEVEN_SPLIT)
        .map(|(r, _)| *r)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measured beside a build (power-ab trial 170-2, GET): the split of rounds in which one
    /// side ran alone on its CPU is 0.13-0.29 away from the rest's.
    #[test]
    fn rounds_off_the_median_split_are_uneven() {
        let ln = |b: f64, a: f64| (b / a).ln();
        let rounds = [
            (1, ln(0.405, 0.402)),
            (2, ln(0.380, 0.500)),
            (3, ln(0.401, 0.398)),
            (4, ln(0.520, 0.395)),
            (5, ln(0.410, 0.400)),
            (6, ln(0.399, 0.410)),
        ];
        assert_eq!(uneven_rounds(&rounds), vec![2, 4]);
    }

    /// A change that moves every split alike (B's server working harder) sets nothing aside.
    #[test]
    fn a_shift_of_every_round_is_the_change_not_unevenness() {
        let rounds: Vec<(u32, f64)> = (1..=8)
            .map(|r| (r, 0.12 + 0.01 * f64::from(r % 3)))
            .collect();
        assert!(uneven_rounds(&rounds).is_empty());
        assert!(uneven_rounds(&[(1, 0.0), (2, 0.5)]).is_empty());
        assert!(uneven_rounds(&[(1, 0.0), (2, f64::NAN), (3, 0.01)]).is_empty());
    }
}
