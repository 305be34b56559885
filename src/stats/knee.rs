//! Where a load curve stops paying: the knee of a sweep (more load, hardly more throughput,
//! worse latency) and the highest load that stays within a stress test's limits, each decided
//! on intervals rather than on point estimates.
//!
//! A step from one level to the next counts as "no gain" only when the whole interval of its
//! throughput gain lies below `min_gain_pct`, and as a gain only when the whole interval lies
//! above it. In between (or with no interval at all: one measurement per level) the rule asks
//! for another measurement of the level with fewer, up to `max_measurements` per level; past
//! that it goes on to the next level and says the step was too noisy to tell. Past
//! saturation every step gains about nothing, which one step's two levels cannot tell at a
//! small `min_gain_pct` on a shared machine: from the first step that told no gain on, the
//! levels after it are also taken together against it (a plateau, `plateau_step`), and the
//! knee is called when their pooled gain lies below `min_gain_pct`. Limits work the same way
//! on a level's p99.
//!
//! A step's interval comes from its own two levels: the variance of the log throughput around
//! each level's mean, pooled over the two (`n_from + n_to - 2` degrees of freedom; benchmark
//! noise is multiplicative). Not over the whole curve: on a shared machine the low levels
//! (client and server taking turns) swing by 30% where the saturated ones swing by 2%, and
//! their noise would hide every knee. A level measured once, long enough for batch means,
//! gives its step an interval from its per-second samples instead.
//!
//! The reading is a pure function of the levels: the sweep replays it after every measurement
//! (and a resumed run replays it on the stored rows), using for each level only as many of its
//! measurements, in iteration order, as the rule asked for, so later repeats do not move it.

use super::change::{change_batches, Basis, Change};
use super::dist::{t_quantile, t_two_sided_p};
use super::Confidence;

/// One measurement of a level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Obs {
    pub(crate) throughput: f64,
    pub(crate) p99_ms: f64,
    /// Failed operations / all operations, 0..=1.
    pub(crate) error_rate: f64,
}

/// One load level of a sweep: its load (connections or target rate) and its measurements.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Level {
    pub(crate) load: f64,
    /// The successful measurements in iteration order.
    pub(crate) obs: Vec<Obs>,
    /// Every iteration tried (successful or failed), for the next one to ask for.
    pub(crate) tried: Vec<u32>,
    /// Batch means of the first measurement's per-second throughput, when it was long enough.
    pub(crate) batches: Option<Vec<f64>>,
}

impl Level {
    /// The lowest iteration not tried yet.
    fn next_iteration(&self) -> u32 {
        (1..).find(|i| !self.tried.contains(i)).unwrap_or(1)
    }
}

/// How the curve's questions are answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rule {
    pub(crate) min_gain_pct: f64,
    /// Measurements of one level the rule may ask for before it goes on.
    pub(crate) max_measurements: u32,
    pub(crate) conf: Confidence,
    /// Whether more can be measured (a running sweep); a stored run's reading uses what it
    /// has, and a step its measurements cannot tell is too noisy to tell.
    pub(crate) can_measure: bool,
}

/// What one step from level `from` to level `to` showed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub(crate) from: usize,
    pub(crate) to: usize,
    /// Measurements of each level the verdict rests on.
    pub(crate) n_from: usize,
    pub(crate) n_to: usize,
    /// The throughput gain with its interval; `None` with too few measurements.
    pub(crate) gain: Option<Change>,
    pub(crate) p99_rose: bool,
    pub(crate) verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The whole interval lies above `min_gain_pct`.
    Gain,
    /// The whole interval lies below it and p99 rose: `from` is the knee.
    Knee,
    /// No gain, but p99 did not rise either: noise, not a knee.
    Flat,
    /// Still undecided after every measurement the rule may ask for: the sweep went on.
    TooNoisy,
    /// Waiting for the measurements in the reading's outcome.
    Pending,
}

/// What a reading asks of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Nothing decided against going on: run the next level.
    GoOn,
    /// Measure these (level index, iteration) before reading again.
    Measure(Vec<(usize, u32)>),
    /// The knee is at this level; the sweep ends at the level after it.
    Knee(usize),
    /// This level broke a limit; the sweep ends there.
    Broken(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    pub(crate) steps: Vec<Step>,
    pub(crate) outcome: Outcome,
}

/// Measurements of each level the replay has used so far.
struct Depths(Vec<usize>);

/// The knee of `levels` (in increasing load) under `rule`.
pub(crate) fn knee(levels: &[Level], rule: &Rule) -> Reading {
    let mut d = Depths(levels.iter().map(|l| l.obs.len().min(1)).collect());
    let mut steps = Vec::new();
    // The first level of a run of steps none of which told a gain: a plateau, perhaps,
    // whose later levels are pooled against it (`plateau_knee`).
    let mut plateau: Option<usize> = None;
    for to in 1..levels.len() {
        let from = to - 1;
        let verdict = loop {
            let gain = gain(levels, &d, from, to, rule.conf);
            let p99_rose =
                mean(levels, &d, to, |o| o.p99_ms) > mean(levels, &d, from, |o| o.p99_ms);
            let decided = match gain {
                Some(c) if c.hi_pct < rule.min_gain_pct && p99_rose => Some(Verdict::Knee),
                Some(c) if c.hi_pct < rule.min_gain_pct => Some(Verdict::Flat),
                Some(c) if c.lo_pct >= rule.min_gain_pct => Some(Verdict::Gain),
                _ => None,
            };
            let verdict = match decided {
                Some(v) => v,
                None => match more(levels, &mut d, &[from, to], rule) {
                    More::Use => continue,
                    More::Measure(m) => {
                        steps.push(step(from, to, &d, gain, p99_rose, Verdict::Pending));
                        return Reading {
                            steps,
                            outcome: Outcome::Measure(m),
                        };
                    }
                    More::Exhausted => Verdict::TooNoisy,
                },
            };
            steps.push(step(from, to, &d, gain, p99_rose, verdict));
            break verdict;
        };
        plateau = match verdict {
            Verdict::Gain => None,
            _ => plateau.or(Some(from)),
        };
        // Each level of the plateau so far against all the levels after it, the earliest
        // first: a noisy low level may have opened the plateau before the curve flattened,
        // and an earlier knee told pooled comes before this step's own.
        let first = plateau.unwrap_or(to);
        for p in first..to.saturating_sub(1) {
            let s = plateau_step(levels, &d, p, to, rule);
            match s.verdict {
                Verdict::Knee => {
                    steps.push(s);
                    return Reading {
                        steps,
                        outcome: Outcome::Knee(p),
                    };
                }
                // The curve rose past `p`: the plateau, if any, starts later.
                Verdict::Gain => plateau = Some(p + 1),
                _ => {}
            }
        }
        if verdict == Verdict::Knee {
            return Reading {
                steps,
                outcome: Outcome::Knee(from),
            };
        }
    }
    Reading {
        steps,
        outcome: Outcome::GoOn,
    }
}

/// Level `p` against its later levels up to `to` taken as one: past saturation each step
/// gains about nothing, and one step's two levels are too few to tell that at a small
/// `min_gain_pct` on a shared machine, but the plateau's levels together are. The knee is `p`
/// when the pooled gain's whole interval lies below `min_gain_pct` and p99 rose; a pooled
/// gain told above it ends the plateau (its verdict `Gain`); otherwise `TooNoisy`. The step's
/// `to` is the last level pooled and `n_to` the measurements of all of them.
fn plateau_step(levels: &[Level], d: &Depths, p: usize, to: usize, rule: &Rule) -> Step {
    let later: Vec<usize> = (p + 1..=to).collect();
    let gain = gain_over(levels, d, p, &later, rule.conf);
    let p99_rose = mean(levels, d, to, |o| o.p99_ms) > mean(levels, d, p, |o| o.p99_ms);
    let verdict = match gain {
        Some(c) if c.hi_pct < rule.min_gain_pct && p99_rose => Verdict::Knee,
        Some(c) if c.lo_pct >= rule.min_gain_pct => Verdict::Gain,
        _ => Verdict::TooNoisy,
    };
    Step {
        from: p,
        to,
        n_from: d.0[p],
        n_to: later.iter().map(|&i| d.0[i]).sum(),
        gain,
        p99_rose,
        verdict,
    }
}

/// Limits of a stress test: past either, the load is not sustainable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    pub(crate) p99_ms: Option<f64>,
    pub(crate) error_rate: Option<f64>,
}

/// What one level showed against the limits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LevelCheck {
    pub(crate) level: usize,
    pub(crate) n: usize,
    /// Mean p99 and its interval (from the level's own log p99s), when there is one.
    pub(crate) p99_ms: f64,
    pub(crate) p99_interval: Option<(f64, f64)>,
    pub(crate) error_rate: f64,
    pub(crate) holds: bool,
    /// The interval still straddled the limit after every measurement: the mean decided.
    pub(crate) by_mean: bool,
}

/// The first level of `levels` that breaks `limits`. A level breaks the p99 limit when its
/// p99's interval lies above it and holds when the interval lies below; in between it is
/// measured again (up to `max_measurements`), after which its mean p99 decides. The error
/// rate is a count over all the level's operations: its mean decides.
pub(crate) fn limit(levels: &[Level], rule: &Rule, limits: Limits) -> (Vec<LevelCheck>, Outcome) {
    let mut d = Depths(levels.iter().map(|l| l.obs.len().min(1)).collect());
    let mut checks = Vec::new();
    for i in 0..levels.len() {
        loop {
            let p99 = mean(levels, &d, i, |o| o.p99_ms);
            let errors = mean(levels, &d, i, |o| o.error_rate);
            let interval = log_interval(levels, &d, i, |o| o.p99_ms, rule.conf);
            let errors_hold = limits.error_rate.is_none_or(|l| errors <= l);
            let p99_says = limits.p99_ms.map(|l| match interval {
                Some((lo, _)) if lo > l => Some(false),
                Some((_, hi)) if hi <= l => Some(true),
                _ => None,
            });
            let (holds, by_mean) = match (errors_hold, p99_says) {
                (false, _) => (false, false),
                (true, None) => (true, false),
                (true, Some(Some(h))) => (h, false),
                (true, Some(None)) => match more(levels, &mut d, &[i], rule) {
                    More::Use => continue,
                    More::Measure(m) => return (checks, Outcome::Measure(m)),
                    More::Exhausted => (limits.p99_ms.is_none_or(|l| p99 <= l), true),
                },
            };
            checks.push(LevelCheck {
                level: i,
                n: d.0[i],
                p99_ms: p99,
                p99_interval: interval,
                error_rate: errors,
                holds,
                by_mean,
            });
            if !holds {
                return (checks, Outcome::Broken(i));
            }
            break;
        }
    }
    (checks, Outcome::GoOn)
}

/// The maximum sustainable load: the last level before the first one that breaks a limit
/// (a stress test stops there; a later level that happens to pass again does not count).
/// `None` when the first level already breaks one, or while a level waits for measurements.
#[cfg(test)]
pub(crate) fn max_sustainable(levels: &[Level], rule: &Rule, limits: Limits) -> Option<usize> {
    match limit(levels, rule, limits).1 {
        Outcome::Broken(0) | Outcome::Measure(_) => None,
        Outcome::Broken(i) => Some(i - 1),
        Outcome::GoOn | Outcome::Knee(_) => levels.len().checked_sub(1),
    }
}

fn step(
    from: usize,
    to: usize,
    d: &Depths,
    gain: Option<Change>,
    p99_rose: bool,
    verdict: Verdict,
) -> Step {
    Step {
        from,
        to,
        n_from: d.0[from],
        n_to: d.0[to],
        gain,
        p99_rose,
        verdict,
    }
}

enum More {
    /// A stored measurement was there: read again with it.
    Use,
    /// Measure these first.
    Measure(Vec<(usize, u32)>),
    /// Every level asked about has had its measurements.
    Exhausted,
}

/// One more measurement of the level(s) of `ask` with the fewest used so far: a stored one
/// when there is, else a request for it, unless they have had `max_measurements` tries.
fn more(levels: &[Level], d: &mut Depths, ask: &[usize], rule: &Rule) -> More {
    let max = rule.max_measurements.max(1) as usize;
    // A level can take one more when it is below the bound and has a stored measurement
    // left or tries left.
    let can = |i: usize| {
        let (l, n) = (&levels[i], d.0[i]);
        n < max && (l.obs.len() > n || (rule.can_measure && l.tried.len() < max))
    };
    let open: Vec<usize> = ask.iter().copied().filter(|&i| can(i)).collect();
    let Some(fewest) = open.iter().map(|&i| d.0[i]).min() else {
        return More::Exhausted;
    };
    let pick: Vec<usize> = open.into_iter().filter(|&i| d.0[i] == fewest).collect();
    if pick.iter().all(|&i| levels[i].obs.len() > d.0[i]) {
        for &i in &pick {
            d.0[i] += 1;
        }
        return More::Use;
    }
    let mut want = Vec::new();
    for &i in &pick {
        if levels[i].obs.len() > d.0[i] {
            d.0[i] += 1;
        } else {
            want.push((i, levels[i].next_iteration()));
        }
    }
    More::Measure(want)
}

/// The mean of `f` over the measurements of level `i` in use.
fn mean(levels: &[Level], d: &Depths, i: usize, f: impl Fn(&Obs) -> f64) -> f64 {
    let obs = &levels[i].obs[..d.0[i]];
    if obs.is_empty() {
        return f64::NAN;
    }
    obs.iter().map(f).sum::<f64>() / obs.len() as f64
}

/// The variance of one measurement's log `f`, pooled over the levels `of` (each around its
/// own mean), and its degrees of freedom; `None` without a repeated level or with a value
/// that has no logarithm.
fn pooled(
    levels: &[Level],
    d: &Depths,
    of: &[usize],
    f: &impl Fn(&Obs) -> f64,
) -> Option<(f64, f64)> {
    let (mut ss, mut df) = (0.0, 0usize);
    for &i in of {
        let logs: Vec<f64> = levels[i].obs[..d.0[i]].iter().map(|o| f(o).ln()).collect();
        if logs.iter().any(|v| !v.is_finite()) {
            return None;
        }
        if logs.len() > 1 {
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            ss += logs.iter().map(|v| (v - m).powi(2)).sum::<f64>();
            df += logs.len() - 1;
        }
    }
    (df > 0).then(|| (ss / df as f64, df as f64))
}

fn log_mean(levels: &[Level], d: &Depths, i: usize, f: &impl Fn(&Obs) -> f64) -> f64 {
    let obs = &levels[i].obs[..d.0[i]];
    obs.iter().map(|o| f(o).ln()).sum::<f64>() / obs.len() as f64
}

/// The gain from level `a` to level `b` in throughput, with its interval.
fn gain(levels: &[Level], d: &Depths, a: usize, b: usize, conf: Confidence) -> Option<Change> {
    gain_over(levels, d, a, &[b], conf)
}

/// The gain from level `a` to the levels `later` taken as one (their measurements' mean log
/// throughput), with its interval from the variance within every level.
fn gain_over(
    levels: &[Level],
    d: &Depths,
    a: usize,
    later: &[usize],
    conf: Confidence,
) -> Option<Change> {
    let f = |o: &Obs| o.throughput;
    let na = d.0[a];
    let nb: usize = later.iter().map(|&i| d.0[i]).sum();
    if na == 0 || later.iter().any(|&i| d.0[i] == 0) {
        return None;
    }
    let all: Vec<usize> = std::iter::once(a).chain(later.iter().copied()).collect();
    if let Some((var, df)) = pooled(levels, d, &all, &f) {
        let later_log: f64 = (later.iter())
            .map(|&i| log_mean(levels, d, i, &f) * d.0[i] as f64)
            .sum::<f64>()
            / nb as f64;
        let diff = later_log - log_mean(levels, d, a, &f);
        let se = (var * (1.0 / na as f64 + 1.0 / nb as f64)).sqrt();
        let q = t_quantile(1.0 - conf.alpha() / 2.0, df);
        let pct = |x: f64| (x.exp() - 1.0) * 100.0;
        return Some(Change {
            pct: pct(diff),
            lo_pct: pct(diff - q * se),
            hi_pct: pct(diff + q * se),
            p: match se > 0.0 {
                true => t_two_sided_p(diff / se, df),
                false => f64::from(diff == 0.0),
            },
            df,
            log_scale: true,
            basis: Basis::Iterations,
            noise_runs: None,
            rounds: None,
        });
    }
    let &[b] = later else { return None };
    match (na, nb, &levels[a].batches, &levels[b].batches) {
        (1, 1, Some(ba), Some(bb)) => change_batches(
            levels[a].obs[0].throughput,
            ba,
            levels[b].obs[0].throughput,
            bb,
            conf,
        ),
        _ => None,
    }
}

/// The interval of level `i`'s mean log `f`, from its own measurements, on the value scale.
fn log_interval(
    levels: &[Level],
    d: &Depths,
    i: usize,
    f: impl Fn(&Obs) -> f64,
    conf: Confidence,
) -> Option<(f64, f64)> {
    let n = d.0[i];
    if n == 0 {
        return None;
    }
    let (var, df) = pooled(levels, d, &[i], &f)?;
    let m = log_mean(levels, d, i, &f);
    let h = t_quantile(1.0 - conf.alpha() / 2.0, df) * (var / n as f64).sqrt();
    Some(((m - h).exp(), (m + h).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level measured once per (throughput, p99) pair, in iteration order.
    fn lvl(load: f64, obs: &[(f64, f64)]) -> Level {
        Level {
            load,
            obs: obs
                .iter()
                .map(|&(throughput, p99_ms)| Obs {
                    throughput,
                    p99_ms,
                    error_rate: 0.0,
                })
                .collect(),
            tried: (1..=obs.len() as u32).collect(),
            batches: None,
        }
    }

    fn rule(max: u32) -> Rule {
        Rule {
            min_gain_pct: 5.0,
            max_measurements: max,
            conf: Confidence::default(),
            can_measure: true,
        }
    }

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn one_measurement_per_level_asks_for_a_second_before_deciding() {
        let c = [lvl(1.0, &[(1000.0, 1.0)]), lvl(2.0, &[(1990.0, 1.1)])];
        let r = knee(&c, &rule(4));
        assert_eq!(r.outcome, Outcome::Measure(vec![(0, 2), (1, 2)]));
        assert_eq!(r.steps[0].verdict, Verdict::Pending);
        // One level alone, or none: nothing to decide.
        assert_eq!(knee(&c[..1], &rule(4)).outcome, Outcome::GoOn);
        assert_eq!(knee(&[], &rule(4)).outcome, Outcome::GoOn);
    }

    #[test]
    fn the_knee_of_a_saturating_curve_with_its_interval() {
        // Two measurements per level, each pair 1% apart: pooled variance of the logs is
        // known in closed form, so the interval is checked against a hand computation with
        // Student's t quantile t(0.975, 5 df) = 2.5705818366147395 (R: qt(0.975, 5)).
        let c = [
            lvl(1.0, &[(1000.0, 1.0), (1010.0, 1.0)]),
            lvl(2.0, &[(1990.0, 1.1), (2009.9, 1.1)]),
            lvl(4.0, &[(3900.0, 1.3), (3939.0, 1.3)]),
            lvl(8.0, &[(7000.0, 1.9), (7070.0, 1.9)]),
            lvl(16.0, &[(7100.0, 4.0), (7171.0, 4.0)]),
            lvl(32.0, &[(7050.0, 9.0), (7120.5, 9.0)]),
        ];
        let r = knee(&c, &rule(4));
        assert_eq!(r.outcome, Outcome::Knee(3), "{r:#?}");
        let s = r.steps.last().unwrap();
        assert_eq!((s.from, s.to, s.verdict), (3, 4, Verdict::Knee));
        let g = s.gain.unwrap();
        // The step's own two levels, two measurements each, 1% apart: each adds
        // SS = ln(1.01)^2 / 2 and one degree of freedom.
        assert_eq!((s.n_from, s.n_to), (2, 2));
        assert_eq!(g.df, 2.0, "{r:#?}");
        let var = 1.01f64.ln().powi(2) / 2.0;
        let se = (var * (1.0 / s.n_from as f64 + 1.0 / s.n_to as f64)).sqrt();
        let diff = (7100.0f64 / 7000.0).ln();
        // Student's t quantile t(0.975, 2 df) (R: qt(0.975, 2)).
        let q = 4.302652729749464;
        assert!(close(g.pct, (diff.exp() - 1.0) * 100.0, 1e-9), "{g:?}");
        assert!(
            close(g.lo_pct, ((diff - q * se).exp() - 1.0) * 100.0, 1e-6),
            "{g:?}"
        );
        assert!(
            close(g.hi_pct, ((diff + q * se).exp() - 1.0) * 100.0, 1e-6),
            "{g:?}"
        );
        assert!(g.hi_pct < 5.0);
        assert!(r.steps[..3].iter().all(|s| s.verdict == Verdict::Gain));
    }

    #[test]
    fn one_noisy_level_is_measured_again_not_taken_for_the_knee() {
        // Level 2's first measurement is a bad second (the flaky CI case: 1 -> 2 looked
        // like no gain). Point estimates would call 1 the knee; the rule asks again.
        let mut c = vec![lvl(1.0, &[(1000.0, 1.0)]), lvl(2.0, &[(1020.0, 1.2)])];
        assert_eq!(
            knee(&c, &rule(4)).outcome,
            Outcome::Measure(vec![(0, 2), (1, 2)])
        );
        c[0] = lvl(1.0, &[(1000.0, 1.0), (1015.0, 1.0)]);
        c[1] = lvl(2.0, &[(1020.0, 1.2), (1900.0, 1.1)]);
        // Now the noise is large and the gain unclear: a third of each.
        let r = knee(&c, &rule(4));
        assert_eq!(r.outcome, Outcome::Measure(vec![(0, 3), (1, 3)]), "{r:#?}");
        c[0] = lvl(1.0, &[(1000.0, 1.0), (1015.0, 1.0), (990.0, 1.0)]);
        c[1] = lvl(2.0, &[(1020.0, 1.2), (1900.0, 1.1), (1950.0, 1.1)]);
        let r = knee(&c, &rule(4));
        assert_ne!(r.steps[0].verdict, Verdict::Knee, "{r:#?}");
        assert!(
            matches!(r.outcome, Outcome::Measure(_) | Outcome::GoOn),
            "{r:#?}"
        );
    }

    #[test]
    fn a_step_too_noisy_to_tell_goes_on_after_the_bound() {
        let c = [
            lvl(1.0, &[(1000.0, 1.0), (1300.0, 1.0)]),
            lvl(2.0, &[(1100.0, 1.2), (1400.0, 1.2)]),
            lvl(4.0, &[(1000.0, 1.5)]),
        ];
        let r = knee(&c, &rule(2));
        assert_eq!(r.steps[0].verdict, Verdict::TooNoisy, "{r:#?}");
        assert_eq!((r.steps[0].n_from, r.steps[0].n_to), (2, 2));
        // The next step has level 4's one measurement and the pooled noise: still unclear,
        // so level 4 (the one with fewer) is asked for again.
        assert_eq!(r.outcome, Outcome::Measure(vec![(2, 2)]), "{r:#?}");
    }

    #[test]
    fn a_stored_run_reads_what_it_has() {
        // Measured once per level by a run that could not ask for more: too noisy to tell.
        let c = [lvl(1.0, &[(1000.0, 1.0)]), lvl(2.0, &[(1010.0, 2.0)])];
        let stored = Rule {
            can_measure: false,
            ..rule(4)
        };
        let r = knee(&c, &stored);
        assert_eq!(r.outcome, Outcome::GoOn);
        assert_eq!(r.steps[0].verdict, Verdict::TooNoisy);
        assert_eq!(r.steps[0].gain, None);
        let (checks, out) = limit(
            &c,
            &stored,
            Limits {
                p99_ms: Some(1.5),
                error_rate: None,
            },
        );
        assert_eq!(out, Outcome::Broken(1));
        assert!(checks[1].by_mean);
    }

    /// Past saturation at 8 connections, each level 4 measurements 8% apart: no single step
    /// tells its ~0% gain below 10% (each interval reaches past +10.5%), but level 8 against
    /// 16 and 32 pooled does (hi +8.9%, scipy's t quantile), and 8 is the knee. The same
    /// curve still rising 15% a level is no plateau.
    #[test]
    fn a_plateau_too_noisy_step_by_step_is_told_pooled() {
        let noisy = |load: f64, base: f64, p99: f64| {
            let obs: Vec<(f64, f64)> = [0.92, 1.08, 1.0, 0.98]
                .iter()
                .map(|k| (base * k, p99))
                .collect();
            lvl(load, &obs)
        };
        let ten = Rule {
            min_gain_pct: 10.0,
            ..rule(4)
        };
        let c: Vec<Level> = [
            (1.0, 1000.0, 1.0),
            (2.0, 2000.0, 1.0),
            (4.0, 4000.0, 1.1),
            (8.0, 8000.0, 1.2),
            (16.0, 8000.0, 2.4),
            (32.0, 7900.0, 4.8),
            (64.0, 8050.0, 9.6),
        ]
        .iter()
        .map(|&(l, b, p)| noisy(l, b, p))
        .collect();
        let r = knee(&c[..5], &ten);
        assert_eq!(r.steps[3].verdict, Verdict::TooNoisy, "{r:#?}");
        assert!(r.steps[3].gain.unwrap().hi_pct > 10.0, "{r:#?}");
        assert_eq!(r.outcome, Outcome::GoOn, "{r:#?}");
        let r = knee(&c, &ten);
        assert_eq!(r.steps[4].verdict, Verdict::TooNoisy, "{r:#?}");
        assert_eq!(r.outcome, Outcome::Knee(3), "{r:#?}");
        let s = r.steps.last().unwrap();
        assert_eq!((s.from, s.to, s.n_from, s.n_to), (3, 5, 4, 8), "{s:#?}");
        let g = s.gain.unwrap();
        assert!(
            close(g.hi_pct, 8.90, 0.01) && close(g.pct, -0.63, 0.01),
            "{g:?}"
        );
        // Rising 15% a level past 8: never a knee.
        let rising: Vec<Level> = (0..7)
            .map(|i| noisy(2f64.powi(i), 1000.0 * 1.15f64.powi(i), 1.0 + i as f64))
            .collect();
        assert_eq!(knee(&rising, &ten).outcome, Outcome::GoOn);
    }

    /// A loaded host's sweep (the means of one such run here): every step is too noisy to
    /// tell alone, the first at 1 -> 2 connections. Level 1 against the rest shows the curve
    /// rose past it, and so on, until 32 against 64 and 128 shows it fell: 32 is the knee,
    /// not the 64 that the step 64 -> 128 alone would name.
    #[test]
    fn a_plateau_opened_by_a_noisy_low_level_moves_up_the_curve() {
        let ten = Rule {
            min_gain_pct: 10.0,
            ..rule(4)
        };
        let means = [
            617_375.0, 597_722.0, 722_878.0, 766_142.0, 845_548.0, 937_715.0,
        ];
        let c: Vec<Level> = (means.iter().chain(&[849_726.0, 722_852.0]))
            .enumerate()
            .map(|(i, &m)| {
                let obs: Vec<(f64, f64)> = [0.85, 1.15, 1.0, 0.97]
                    .iter()
                    .map(|k| (m * k, 0.02 * 2f64.powi(i as i32)))
                    .collect();
                lvl(2f64.powi(i as i32), &obs)
            })
            .collect();
        let r = knee(&c, &ten);
        // Up to 64 connections no step tells alone; 64 -> 128 alone would make 64 the knee.
        assert!(
            (r.steps[..6].iter()).all(|s| s.verdict == Verdict::TooNoisy),
            "{r:#?}"
        );
        assert_eq!(r.outcome, Outcome::Knee(5), "{r:#?}");
        let s = r.steps.last().unwrap();
        assert_eq!((s.from, s.to), (5, 7), "{s:#?}");
    }

    #[test]
    fn a_flat_step_with_flat_latency_is_noise_not_a_knee() {
        let c = [
            lvl(1.0, &[(100.0, 1.0), (100.5, 1.0)]),
            lvl(2.0, &[(101.0, 1.0), (101.5, 1.0)]),
            lvl(4.0, &[(300.0, 1.1), (301.0, 1.1)]),
        ];
        let r = knee(&c, &rule(4));
        assert_eq!(r.steps[0].verdict, Verdict::Flat);
        assert_eq!(r.steps[1].verdict, Verdict::Gain);
        assert_eq!(r.outcome, Outcome::GoOn);
    }

    #[test]
    fn later_measurements_do_not_move_a_decided_reading() {
        // Decided on two measurements each; a later repeat round's third ones stay unused.
        let two = [
            lvl(1.0, &[(1000.0, 1.0), (1010.0, 1.0)]),
            lvl(2.0, &[(1990.0, 1.1), (2000.0, 1.1)]),
            lvl(4.0, &[(2000.0, 3.0), (2010.0, 3.0)]),
        ];
        let mut three = two.clone();
        for l in &mut three {
            l.obs.push(Obs {
                throughput: l.obs[0].throughput * 1.3,
                p99_ms: 0.5,
                error_rate: 0.0,
            });
            l.tried.push(3);
        }
        let (a, b) = (knee(&two, &rule(4)), knee(&three, &rule(4)));
        assert_eq!(a.outcome, Outcome::Knee(1));
        assert_eq!(a, b);
    }

    #[test]
    fn a_failed_try_counts_against_the_bound() {
        let mut c = [lvl(1.0, &[(1000.0, 1.0)]), lvl(2.0, &[(2000.0, 1.0)])];
        c[1].tried = vec![1, 2];
        // Level 1 failed its second try: the next one asked for is its third.
        assert_eq!(
            knee(&c, &rule(4)).outcome,
            Outcome::Measure(vec![(0, 2), (1, 3)])
        );
        // With the bound at 2, level 1 has no tries left: level 0 alone is measured again,
        // and then the step goes on.
        assert_eq!(knee(&c, &rule(2)).outcome, Outcome::Measure(vec![(0, 2)]));
        c[0] = lvl(1.0, &[(1000.0, 1.0), (1010.0, 1.0)]);
        let r = knee(&c, &rule(2));
        assert_eq!(r.outcome, Outcome::GoOn, "{r:#?}");
        assert_eq!(r.steps[0].verdict, Verdict::Gain, "{r:#?}");
    }

    #[test]
    fn one_long_measurement_each_is_read_from_its_batch_means() {
        let mut a = lvl(1.0, &[(1000.0, 1.0)]);
        let mut b = lvl(2.0, &[(1010.0, 2.0)]);
        a.batches = Some(vec![995.0, 1000.0, 1005.0, 998.0, 1002.0]);
        b.batches = Some(vec![1005.0, 1010.0, 1015.0, 1008.0, 1012.0]);
        let r = knee(&[a, b], &rule(4));
        assert_eq!(r.outcome, Outcome::Knee(0), "{r:#?}");
        assert_eq!(r.steps[0].gain.unwrap().basis, Basis::BatchMeans);
    }

    #[test]
    fn limits_are_judged_on_the_p99_interval() {
        let limits = Limits {
            p99_ms: Some(10.0),
            error_rate: Some(0.01),
        };
        // Level 3's p99 is far above the limit on both measurements: broken.
        let c = [
            lvl(1.0, &[(100.0, 1.0), (100.0, 1.1)]),
            lvl(2.0, &[(200.0, 2.0), (200.0, 2.1)]),
            lvl(4.0, &[(390.0, 40.0), (400.0, 42.0)]),
        ];
        let (checks, out) = limit(&c, &rule(4), limits);
        assert_eq!(out, Outcome::Broken(2));
        assert!(checks[..2].iter().all(|c| c.holds && !c.by_mean));
        assert_eq!(max_sustainable(&c, &rule(4), limits), Some(1));
        // One measurement near the limit, nothing pooled yet: measured again.
        let near = [lvl(1.0, &[(100.0, 9.0)])];
        assert_eq!(
            limit(&near, &rule(4), limits).1,
            Outcome::Measure(vec![(0, 2)])
        );
        // At the bound, the mean decides and says so.
        let (checks, out) = limit(&near, &rule(1), limits);
        assert_eq!(out, Outcome::GoOn);
        assert!(checks[0].holds && checks[0].by_mean);
        // The error rate's mean decides at once.
        let mut errs = lvl(1.0, &[(100.0, 1.0)]);
        errs.obs[0].error_rate = 0.02;
        assert_eq!(
            limit(&[errs.clone()], &rule(4), limits).1,
            Outcome::Broken(0)
        );
        assert_eq!(max_sustainable(&[errs], &rule(4), limits), None);
        let none = Limits {
            p99_ms: None,
            error_rate: None,
        };
        assert_eq!(max_sustainable(&c, &rule(4), none), Some(2));
    }
}
