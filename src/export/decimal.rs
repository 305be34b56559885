//! Unit changes that keep a stored number's digits: milliseconds to seconds or nanoseconds,
//! percent to a ratio. Dividing by 1000 can add binary noise (1.061 ms would be
//! 0.0010609999999999999 s); moving the decimal point of the number's shortest decimal
//! form gives what the run stored, in the other unit.

/// `value` x 10^`places`, read from `value`'s shortest decimal digits with the point moved.
pub(crate) fn shifted(value: f64, places: i32) -> f64 {
    if places == 0 || !value.is_finite() || value == 0.0 {
        return value;
    }
    // `{:e}` prints the shortest digits that read back as `value`: `2.63e-1`.
    let text = format!("{value:e}");
    let (digits, exp) = text
        .split_once('e')
        .expect("invariant: `{:e}` of a finite number has an exponent");
    let exp: i32 = exp
        .parse()
        .expect("invariant: `{:e}` prints an integer exponent");
    format!("{digits}e{}", exp + places)
        .parse()
        .expect("invariant: digits and an exponent read as a number")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_digits_move_without_noise() {
        assert_eq!(shifted(0.263, -3).to_string(), "0.000263");
        assert_eq!(shifted(1.061, -3).to_string(), "0.001061");
        // What a division would have printed.
        assert_eq!((1.061f64 / 1000.0).to_string(), "0.0010609999999999999");
        assert_eq!(shifted(0.045, -3).to_string(), "0.000045");
        assert_eq!(shifted(0.131249, 6).to_string(), "131249");
        assert_eq!(shifted(-19.912, -2).to_string(), "-0.19912");
        assert_eq!(
            shifted(13114.189629241138, 0).to_string(),
            "13114.189629241138"
        );
        assert_eq!(shifted(0.0, -3), 0.0);
        assert_eq!(shifted(1e300, 10), f64::INFINITY);
    }
}
