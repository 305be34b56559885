//! sysbench 1.0's key distributions (`src/sb_rand.c`): every generator returns an integer in
//! `[a, b]`. Zipfian is sysbench master's rejection-inversion sampler.

use rand::Rng;

use crate::workloads::oltp::spec::{OltpSpec, RandType};

/// A configured `sysbench.rand.default`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyDist {
    kind: RandType,
    spec_iter: u32,
    spec_pct: u32,
    spec_res: u32,
    pareto_power: f64,
    zipf_exp: f64,
}

impl KeyDist {
    pub(crate) fn new(spec: &OltpSpec) -> KeyDist {
        let h = spec.rand_pareto_h;
        KeyDist {
            kind: spec.rand_type,
            spec_iter: spec.rand_spec_iter.max(1),
            spec_pct: spec.rand_spec_pct,
            spec_res: spec.rand_spec_res.min(99),
            pareto_power: h.ln() / (1.0 - h).ln(),
            zipf_exp: spec.rand_zipfian_exp,
        }
    }

    pub(crate) fn sample<R: Rng>(&self, rng: &mut R, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => uniform(rng, a, b),
            RandType::Gaussian => gaussian(rng, a, b, self.spec_iter),
            RandType::Special => self.special(rng, a, b),
            RandType::Pareto => {
                let t = (b - a) as f64 + 1.0;
                let v = a as u64 + (t * rng.random::<f64>().powf(self.pareto_power)) as u64;
                v.min(b as u64) as u32
            }
            RandType::Zipfian => zipfian(rng, a, b, self.zipf_exp),
        }
    }

    fn special<R: Rng>(&self, rng: &mut R, a: u32, b: u32) -> u32 {
        if a >= b {
            return 0;
        }
        let t = (b - a) as u64 + 1;
        // As in sb_rand_special: the range is stretched so that res% of draws land in the
        // special window and the rest follow the gaussian.
        let range = t * (100 / (100 - self.spec_res as u64));
        let mut res = rng.random::<u64>() % range;
        if res < t {
            return gaussian(rng, a, b, self.spec_iter);
        }
        let d = (t * self.spec_pct as u64 / 100).max(1);
        res %= d;
        res += t / 2 - t * self.spec_pct as u64 / 200;
        (a as u64 + res) as u32
    }
}

pub(crate) fn uniform<R: Rng>(rng: &mut R, a: u32, b: u32) -> u32 {
    let t = (b - a) as f64 + 1.0;
    (a as u64 + (rng.random::<f64>() * t) as u64).min(b as u64) as u32
}

fn gaussian<R: Rng>(rng: &mut R, a: u32, b: u32, iter: u32) -> u32 {
    let t = (b - a) as u64 + 1;
    let sum: u64 = (0..iter).map(|_| rng.random::<u64>() % t).sum();
    (a as u64 + sum / iter as u64) as u32
}

/// Bounded Zipf over `[a, b]`, P(a + k - 1) ~ 1/k^s (Hörmann & Derflinger rejection-inversion,
/// as ported to sysbench master from Apache Commons RNG).
fn zipfian<R: Rng>(rng: &mut R, a: u32, b: u32, s: f64) -> u32 {
    let n = (b - a) as f64 + 1.0;
    let h = |x: f64| helper2((1.0 - s) * x.ln()) * x.ln();
    let h_inv = |x: f64| {
        let t = (x * (1.0 - s)).max(-1.0);
        (helper1(t) * x).exp()
    };
    let h_int_x1 = h(1.5) - 1.0;
    let h_int_n = h(n + 0.5);
    let big_s = 2.0 - h_inv(h(2.5) - (2.0f64).powf(-s));
    loop {
        let u = h_int_n + rng.random::<f64>() * (h_int_x1 - h_int_n);
        let x = h_inv(u);
        let k = (x + 0.5).floor().clamp(1.0, n);
        if k - x <= big_s || u >= h(k + 0.5) - (-(k.ln() * s)).exp() {
            return a + k as u32 - 1;
        }
    }
}

/// log(1+x)/x, stable near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (exp(x)-1)/x, stable near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// `sysbench.rand.unique()`: a 32-bit permutation (Preshing's quadratic residues), so ids
/// from a shared counter never repeat.
pub(crate) fn unique(index: u32, offset: u32) -> u32 {
    fn qpr(x: u32) -> u32 {
        const PRIME: u32 = 4_294_967_291;
        if x >= PRIME {
            return x;
        }
        let r = ((x as u64 * x as u64) % PRIME as u64) as u32;
        if x <= PRIME / 2 {
            r
        } else {
            PRIME - r
        }
    }
    qpr(qpr(index).wrapping_add(offset) ^ 0x5bf0_3635)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn dist(kind: RandType) -> KeyDist {
        KeyDist::new(&OltpSpec {
            rand_type: kind,
            ..OltpSpec::default()
        })
    }

    fn draws(kind: RandType, n: usize) -> Vec<u32> {
        let d = dist(kind);
        let mut rng = SmallRng::seed_from_u64(7);
        (0..n).map(|_| d.sample(&mut rng, 1, 10_000)).collect()
    }

    fn frac(v: &[u32], f: impl Fn(u32) -> bool) -> f64 {
        v.iter().filter(|x| f(**x)).count() as f64 / v.len() as f64
    }

    #[test]
    fn every_distribution_stays_in_range() {
        for k in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
            RandType::Zipfian,
        ] {
            assert!(
                draws(k, 20_000).iter().all(|x| (1..=10_000).contains(x)),
                "{k:?}"
            );
        }
    }

    #[test]
    fn uniform_is_flat() {
        let v = draws(RandType::Uniform, 100_000);
        for q in 0..4 {
            let lo = q * 2500 + 1;
            let f = frac(&v, |x| (lo..lo + 2500).contains(&x));
            assert!((f - 0.25).abs() < 0.01, "quarter {q}: {f}");
        }
        let mean = v.iter().map(|x| *x as f64).sum::<f64>() / v.len() as f64;
        assert!((mean - 5000.5).abs() < 50.0, "{mean}");
    }

    #[test]
    fn gaussian_is_centred_with_sigma_range_over_12() {
        let v = draws(RandType::Gaussian, 100_000);
        let n = v.len() as f64;
        let mean = v.iter().map(|x| *x as f64).sum::<f64>() / n;
        let sd = (v.iter().map(|x| (*x as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!((mean - 5000.0).abs() < 30.0, "{mean}");
        // Mean of 12 uniforms: sigma = range / sqrt(12 * 12) = range / 12.
        assert!((sd - 10_000.0 / 12.0).abs() < 30.0, "{sd}");
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        let v = draws(RandType::Special, 100_000);
        // Window: t/2 - t*pct/200 .. + t*pct/100 = 4950..5050 (offset 1).
        let f = frac(&v, |x| (4951..=5050).contains(&x));
        // 75% land in the window, plus the gaussian's small share of it.
        assert!((0.75..0.80).contains(&f), "{f}");
    }

    #[test]
    fn pareto_80_20() {
        let v = draws(RandType::Pareto, 100_000);
        let f = frac(&v, |x| x <= 2000);
        assert!((f - 0.8).abs() < 0.01, "{f}");
    }

    #[test]
    fn zipfian_follows_the_power_law() {
        let v = draws(RandType::Zipfian, 200_000);
        let c1 = frac(&v, |x| x == 1);
        let c2 = frac(&v, |x| x == 2);
        let c4 = frac(&v, |x| x == 4);
        // P(k) ~ k^-0.8: P(1)/P(2) = 2^0.8 = 1.74, P(1)/P(4) = 3.03.
        assert!((c1 / c2 - 1.74).abs() < 0.15, "{}", c1 / c2);
        assert!((c1 / c4 - 3.03).abs() < 0.3, "{}", c1 / c4);
        // Head-heavy: the lowest 10% of ids take well over 10% of draws.
        assert!(frac(&v, |x| x <= 1000) > 0.4);
    }

    #[test]
    fn unique_never_repeats() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(seen.insert(unique(i, 12345)));
        }
    }
}
