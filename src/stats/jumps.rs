//! Rounds whose host CPU pressure jumped: the rounds a paired change should be read with
//! care, since other work on the host may have hit the two deployments of the round
//! unequally. A round is flagged when its pressure (the higher of its two rows'
//! `host_cpu_pressure_pct`) is above [`JUMP_FACTOR`] times the median round's and at least
//! [`JUMP_MIN_POINTS`] percentage points above it: a quiet host's 0.1% -> 0.4% is no jump.

/// A flagged round's pressure exceeds the median round's by this factor ...
pub(crate) const JUMP_FACTOR: f64 = 3.0;
/// ... and by this many percentage points.
pub(crate) const JUMP_MIN_POINTS: f64 = 10.0;

/// The rounds (as given) whose pressure jumped; rounds without a pressure are left out.
pub(crate) fn jumped_rounds(pressure: &[(u32, f64)]) -> Vec<u32> {
    let Some(median) = super::located::median_of_rounds(pressure.iter().map(|x| x.1)) else {
        return Vec::new();
    };
    pressure
        .iter()
        .filter(|(_, x)| *x > JUMP_FACTOR * median && *x >= median + JUMP_MIN_POINTS)
        .map(|(r, _)| *r)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_well_above_the_median_is_flagged() {
        let rounds = [(1, 5.0), (2, 6.0), (3, 40.0), (4, 4.0), (5, 5.5), (6, 17.0)];
        // Median 5.75: 40 is a jump, 17 (under 3x) is not.
        assert_eq!(jumped_rounds(&rounds), vec![3]);
        // A quiet host: 3x the median but under 10 points.
        assert!(jumped_rounds(&[(1, 0.1), (2, 0.1), (3, 0.5)]).is_empty());
        assert!(jumped_rounds(&[(1, 1.0), (2, 50.0)]).is_empty());
    }
}
