//! The E-divisive energy statistic of a univariate series (Matteson and James, 2014, with
//! exponent 1), the divergence that [`super::changepoint`] splits a history on.
//!
//! For a segment `X = z[s..tau]` (n points) followed by `Y = z[tau..kappa]` (m points):
//!
//! ```text
//! E = 2/(n m) sum |X_i - Y_j| - sum_{i<k} |X_i - X_k| / C(n,2) - sum_{j<k} |Y_j - Y_k| / C(m,2)
//! Q = n m / (n + m) * E
//! ```
//!
//! `E` is the energy distance of the two samples (0 when they come from one distribution) and
//! `Q` weighs it by their sizes. `Y` may end before the segment does (`kappa < e`, as in
//! Otava): a regression that is later fixed is found as the block it is, not blurred by the
//! runs after the fix.
//!
//! All pairwise sums come from one table of 2-D prefix sums of `|z_i - z_j|`, so each `Q` is
//! O(1) and the best split of a segment of `L` points costs O(L^2). The table takes
//! `(len + 1)^2` floats: 8 MB for a history of 1000 runs.

/// Prefix sums of the distance matrix of a series.
pub(crate) struct Energy {
    /// `sums[i * w + j]` = sum of `|z_a - z_b|` over `a < i`, `b < j` (`w = len + 1`).
    sums: Vec<f64>,
    w: usize,
}

impl Energy {
    pub(crate) fn new(z: &[f64]) -> Energy {
        let w = z.len() + 1;
        let mut sums = vec![0.0; w * w];
        for i in 0..z.len() {
            for j in 0..z.len() {
                sums[(i + 1) * w + j + 1] =
                    (z[i] - z[j]).abs() + sums[i * w + j + 1] + sums[(i + 1) * w + j]
                        - sums[i * w + j];
            }
        }
        Energy { sums, w }
    }

    /// Sum of `|z_a - z_b|` over `a` in `rows`, `b` in `cols` (half-open ranges).
    fn block(&self, rows: (usize, usize), cols: (usize, usize)) -> f64 {
        let s = |i: usize, j: usize| self.sums[i * self.w + j];
        s(rows.1, cols.1) - s(rows.0, cols.1) - s(rows.1, cols.0) + s(rows.0, cols.0)
    }

    /// Mean distance between the pairs of distinct points in `a..b` (0 below two points).
    fn within(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n < 2.0 {
            return 0.0;
        }
        // The block counts each pair twice (and the zero diagonal).
        self.block((a, b), (a, b)) / (n * (n - 1.0))
    }

    /// `Q` of `z[s..tau]` against `z[tau..kappa]` (both non-empty).
    pub(crate) fn q(&self, s: usize, tau: usize, kappa: usize) -> f64 {
        let (n, m) = ((tau - s) as f64, (kappa - tau) as f64);
        let between = self.block((s, tau), (tau, kappa)) / (n * m);
        let e = 2.0 * between - self.within(s, tau) - self.within(tau, kappa);
        n * m / (n + m) * e
    }

    /// The `(tau, kappa)` maximising `Q` inside `s..e`, with at least `min` points on each
    /// side; the first such pair on ties. `None` when the segment is shorter than `2 * min`.
    pub(crate) fn best_split(&self, s: usize, e: usize, min: usize) -> Option<(usize, usize)> {
        let min = min.max(1);
        if e.saturating_sub(s) < min.saturating_mul(2) {
            return None;
        }
        let mut best: Option<(usize, usize, f64)> = None;
        for tau in s + min..=e - min {
            for kappa in tau + min..=e {
                let q = self.q(s, tau, kappa);
                if best.is_none_or(|b| q > b.2) {
                    best = Some((tau, kappa, q));
                }
            }
        }
        best.map(|b| (b.0, b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, summed directly.
    fn q_direct(x: &[f64], y: &[f64]) -> f64 {
        let (n, m) = (x.len() as f64, y.len() as f64);
        let mut between = 0.0;
        for a in x {
            for b in y {
                between += (a - b).abs();
            }
        }
        let within = |v: &[f64]| {
            let mut s = 0.0;
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    s += (v[i] - v[j]).abs();
                }
            }
            let k = v.len() as f64;
            if k < 2.0 {
                0.0
            } else {
                s / (k * (k - 1.0) / 2.0)
            }
        };
        n * m / (n + m) * (2.0 * between / (n * m) - within(x) - within(y))
    }

    #[test]
    fn prefix_sums_give_the_definition() {
        let z = [3.0, 1.5, 4.0, 1.0, 5.5, 9.0, 2.5, 6.0, 5.0, 3.5];
        let en = Energy::new(&z);
        for s in 0..z.len() {
            for tau in s + 1..z.len() {
                for kappa in tau + 1..=z.len() {
                    let want = q_direct(&z[s..tau], &z[tau..kappa]);
                    let got = en.q(s, tau, kappa);
                    assert!((got - want).abs() < 1e-9, "{s} {tau} {kappa}: {got} {want}");
                }
            }
        }
    }

    #[test]
    fn the_best_split_is_the_step_and_respects_the_minimum() {
        let z = [1.0, 1.1, 0.9, 1.0, 2.0, 2.1, 1.9, 2.0, 2.05];
        let en = Energy::new(&z);
        assert_eq!(en.best_split(0, z.len(), 2), Some((4, 9)));
        // A block that returns: the right side ends where the block does.
        let b = [1.0, 1.1, 0.9, 1.0, 2.0, 2.1, 1.9, 1.0, 0.95, 1.05, 1.0];
        assert_eq!(Energy::new(&b).best_split(0, b.len(), 2), Some((4, 7)));
        assert_eq!(
            en.best_split(0, 5, 3),
            None,
            "5 points cannot hold two sides of 3"
        );
        assert_eq!(en.best_split(0, 6, 3), Some((3, 6)));
        assert_eq!(Energy::new(&[]).best_split(0, 0, 2), None);
        assert_eq!(en.best_split(0, z.len(), usize::MAX), None);
    }
}
