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

    /// `sb_rand_special` of sysbench 1.0.20, in its floating point: the range is stretched by
    /// `100 / (100 - res)`, one uniform `rnd` picks the branch, and the same `rnd` places a
    /// hot draw in a window of `t * pct / 100 + 1` positions at the middle of `[a, b]`, `t`
    /// being `b - a` (with the defaults, 77 ids of 10,000, about 1% of draws each).
    fn special<R: Rng>(&self, rng: &mut R, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64;
        let range_size = t * (100.0 / (100.0 - self.spec_res as f64));
        let rnd: f64 = rng.random();
        if rnd * range_size < t {
            // Its gaussian spans `t`, not `t + 1` as sb_rand_gaussian's does.
            let sum: f64 = (0..self.spec_iter).map(|_| rng.random::<f64>()).sum();
            return a + (sum * t * (1.0 / self.spec_iter as f64)) as u32;
        }
        let d = t * (self.spec_pct as f64 / 100.0);
        let res = rnd * (d + 1.0) + t / 2.0 - t * (self.spec_pct as f64 / 200.0);
        a + res as u32
    }
}

pub(crate) fn uniform<R: Rng>(rng: &mut R, a: u32, b: u32) -> u32 {
    let t = (b - a) as f64 + 1.0;
    (a as u64 + (rng.random::<f64>() * t) as u64).min(b as u64) as u32
}

/// `sb_rand_gaussian`: the mean of `iter` uniform doubles over `[0, b - a + 1)`, truncated.
fn gaussian<R: Rng>(rng: &mut R, a: u32, b: u32, iter: u32) -> u32 {
    let t = (b - a) as f64 + 1.0;
    let sum: f64 = (0..iter).map(|_| rng.random::<f64>() * t).sum();
    (a + (sum * (1.0 / iter as f64)) as u32).min(b)
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

    /// sysbench 1.0.20's defaults (iter 12, pct 1, res 75) over ids 1..10,000, computed from
    /// sb_rand_special's formula by hand, not from this code: a hot draw (rnd >= 0.25) is id
    /// 1 + floor(rnd * 100.99 + 4949.505), so ids 4975..=5051 (77 ids); an inner id takes
    /// 1/100.99 of rnd's range, 0.990% of draws, its edges 0.245% (4975) and 0.490% (5051);
    /// the gaussian quarter adds 0.25 * f(6) * 12 / 9999 = 0.0118% near the middle (f, the
    /// Irwin-Hall density of 12 uniforms at its mean, 0.39393). rmatrix's old port had a
    /// window of 100 ids (4951..=5050) at 0.75% each.
    #[test]
    fn special_is_sysbench_1_0s_window_of_77_ids() {
        let v = draws(RandType::Special, 2_000_000);
        let mut count = std::collections::HashMap::new();
        for x in &v {
            *count.entry(*x).or_insert(0u64) += 1;
        }
        let p = |id: u32| count.get(&id).copied().unwrap_or(0) as f64 / v.len() as f64;
        let hot: Vec<u32> = (1..=10_000).filter(|id| p(*id) > 0.001).collect();
        assert_eq!(hot.first().copied(), Some(4975), "{hot:?}");
        assert_eq!(hot.last().copied(), Some(5051), "{hot:?}");
        assert_eq!(hot.len(), 77);
        let inner: f64 = (4976..=5050).map(p).sum::<f64>() / 75.0;
        assert!((inner - (0.00990 + 0.000118)).abs() < 0.0002, "{inner}");
        assert!(
            (p(4975) - (0.00245 + 0.000118)).abs() < 0.0004,
            "{}",
            p(4975)
        );
        assert!(
            (p(5051) - (0.00490 + 0.000118)).abs() < 0.0004,
            "{}",
            p(5051)
        );
        // Outside the window only the gaussian: 0.0118% beside it.
        assert!((p(4974) - 0.000118).abs() < 0.0001, "{}", p(4974));
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
