//! When an open-loop client starts each request: on a schedule fixed in advance by the target
//! rate, not by when replies come back, so that a slow server shows up as latency (measured
//! from the intended start) instead of as fewer requests (coordinated omission).
//!
//! The rate may be constant, a step (a level held for a while, then the next) or a wave
//! (sinusoidal around a mean); arrivals are evenly spaced or Poisson (exponential gaps,
//! a time-varying rate by thinning).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The target rate over time, in requests per second.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    Constant(f64),
    /// Each rate held for `hold_s` seconds in turn; the last one holds to the end.
    Steps {
        rates: Vec<f64>,
        hold_s: f64,
    },
    /// `mean + amplitude * sin(2 pi t / period_s)`; `amplitude <= mean`.
    Wave {
        mean: f64,
        amplitude: f64,
        period_s: f64,
    },
}

impl Shape {
    pub(crate) fn rate_at(&self, t: f64) -> f64 {
        match self {
            Shape::Constant(r) => *r,
            Shape::Steps { rates, hold_s } => {
                let i = (t / hold_s).floor().max(0.0) as usize;
                rates[i.min(rates.len() - 1)]
            }
            Shape::Wave {
                mean,
                amplitude,
                period_s,
            } => mean + amplitude * (std::f64::consts::TAU * t / period_s).sin(),
        }
    }

    /// The highest rate the shape reaches (the thinning envelope).
    pub(crate) fn max_rate(&self) -> f64 {
        match self {
            Shape::Constant(r) => *r,
            Shape::Steps { rates, .. } => rates.iter().copied().fold(0.0, f64::max),
            Shape::Wave {
                mean, amplitude, ..
            } => mean + amplitude,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spacing {
    Even,
    Poisson,
}

/// Intended start times, in seconds from the start of the measured phase, in order.
pub(crate) struct Schedule {
    shape: Shape,
    spacing: Spacing,
    rng: StdRng,
    t: f64,
}

impl Schedule {
    /// `seed` makes a Poisson schedule repeatable (the run's seed, recorded in its manifest).
    pub(crate) fn new(shape: Shape, spacing: Spacing, seed: u64) -> Schedule {
        Schedule {
            shape,
            spacing,
            rng: StdRng::seed_from_u64(seed),
            t: 0.0,
        }
    }
}

impl Iterator for Schedule {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        let max = self.shape.max_rate();
        if !(max > 0.0 && max.is_finite()) {
            return None;
        }
        match self.spacing {
            Spacing::Even => {
                // The gap at the current rate; a zero rate (a wave's trough) waits for the
                // rate to come back rather than dividing by zero.
                let rate = self.shape.rate_at(self.t).max(max * 1e-3);
                self.t += 1.0 / rate;
            }
            Spacing::Poisson => loop {
                // Exponential gaps at the envelope rate, each kept with probability
                // rate(t) / max: a Poisson process with rate(t) (Lewis-Shedler thinning).
                let u: f64 = 1.0 - self.rng.random::<f64>();
                self.t += -u.ln() / max;
                if self.rng.random::<f64>() * max <= self.shape.rate_at(self.t) {
                    break;
                }
            },
        }
        Some(self.t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn until(s: Schedule, end: f64) -> Vec<f64> {
        s.take_while(|t| *t < end).collect()
    }

    #[test]
    fn even_spacing_is_exact() {
        let t = until(Schedule::new(Shape::Constant(4.0), Spacing::Even, 1), 2.0);
        assert_eq!(t, vec![0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]);
    }

    #[test]
    fn poisson_has_the_mean_and_variance_of_poisson() {
        // 1000/s for 200 s: 200,000 arrivals expected, sd sqrt(200000) = 447.
        let t = until(
            Schedule::new(Shape::Constant(1000.0), Spacing::Poisson, 7),
            200.0,
        );
        assert!(
            (t.len() as f64 - 200_000.0).abs() < 4.0 * 447.0,
            "{}",
            t.len()
        );
        // Gaps: exponential with mean 1 ms, so their coefficient of variation is 1.
        let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.001).abs() < 0.00002, "{mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "cv {}",
            var.sqrt() / mean
        );
        // Counts per second: variance equals the mean (index of dispersion 1).
        let mut per_s = vec![0.0; 200];
        for x in &t {
            per_s[*x as usize] += 1.0;
        }
        let m = per_s.iter().sum::<f64>() / 200.0;
        let v = per_s.iter().map(|c| (c - m).powi(2)).sum::<f64>() / 199.0;
        // The sample variance of 200 Poisson(1000) counts is within about 30% of 1000.
        assert!((v / m - 1.0).abs() < 0.3, "dispersion {}", v / m);
        // The same seed gives the same schedule.
        let again = until(
            Schedule::new(Shape::Constant(1000.0), Spacing::Poisson, 7),
            1.0,
        );
        assert_eq!(again[..], t[..again.len()]);
    }

    #[test]
    fn steps_and_waves_follow_their_rate() {
        let steps = Shape::Steps {
            rates: vec![100.0, 300.0],
            hold_s: 10.0,
        };
        let t = until(Schedule::new(steps, Spacing::Poisson, 3), 20.0);
        let first = t.iter().filter(|x| **x < 10.0).count() as f64;
        let second = t.len() as f64 - first;
        assert!((first - 1000.0).abs() < 4.0 * 1000f64.sqrt(), "{first}");
        assert!((second - 3000.0).abs() < 4.0 * 3000f64.sqrt(), "{second}");

        // A wave of mean 500 and amplitude 400 over 10 s periods: 5000 per period; the rising
        // half-period gets 500*5 + 400*10/pi = 3773, the falling one 1227.
        let wave = Shape::Wave {
            mean: 500.0,
            amplitude: 400.0,
            period_s: 10.0,
        };
        for spacing in [Spacing::Even, Spacing::Poisson] {
            let t = until(Schedule::new(wave.clone(), spacing, 5), 100.0);
            let high = t.iter().filter(|x| (**x % 10.0) < 5.0).count() as f64 / 10.0;
            let low = t.iter().filter(|x| (**x % 10.0) >= 5.0).count() as f64 / 10.0;
            assert!((high - 3773.2).abs() < 60.0, "{spacing:?} {high}");
            assert!((low - 1226.8).abs() < 60.0, "{spacing:?} {low}");
        }
    }

    #[test]
    fn no_rate_no_arrivals() {
        assert_eq!(
            Schedule::new(Shape::Constant(0.0), Spacing::Even, 1).next(),
            None
        );
        assert_eq!(
            Schedule::new(Shape::Constant(f64::NAN), Spacing::Poisson, 1).next(),
            None
        );
    }
}
