//! TPC-C's random values (specification 2.1.6 and 4.3.2): NURand with its C constants, the
//! customer last names built from syllables, the alphanumeric and numeric strings, zip codes
//! and the "ORIGINAL" mark, and the permutation of customer ids an order load draws.

use rand::seq::SliceRandom;
use rand::Rng;

/// The A of NURand(A, x, y) for each non-uniform field (2.1.6).
pub(crate) const A_C_LAST: u32 = 255;
pub(crate) const A_C_ID: u32 = 1023;
pub(crate) const A_OL_I_ID: u32 = 8191;

/// The C constants of one run (2.1.6): one per field, drawn once. The load's C for C_LAST and
/// the run's must differ by 65..=119, not 96 or 112 (2.1.6.1), so that the run's names are not
/// the load's distribution again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Constants {
    pub(crate) c_last: u32,
    pub(crate) c_id: u32,
    pub(crate) ol_i_id: u32,
}

impl Constants {
    /// Constants for loading.
    pub(crate) fn draw(rng: &mut impl Rng) -> Constants {
        Constants {
            c_last: rng.random_range(0..=A_C_LAST),
            c_id: rng.random_range(0..=A_C_ID),
            ol_i_id: rng.random_range(0..=A_OL_I_ID),
        }
    }

    /// The run's constants for data loaded with `self`: C_LAST moved by a delta the
    /// specification allows, C_ID and OL_I_ID kept.
    pub(crate) fn for_run(self, rng: &mut impl Rng) -> Constants {
        let c_last = loop {
            let c = rng.random_range(0..=A_C_LAST);
            if run_delta_ok(self.c_last, c) {
                break c;
            }
        };
        Constants { c_last, ..self }
    }
}

/// Whether a run's C_LAST may follow a load's (2.1.6.1).
pub(crate) fn run_delta_ok(load: u32, run: u32) -> bool {
    let delta = load.abs_diff(run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
pub(crate) fn nurand(rng: &mut impl Rng, a: u32, c: u32, x: u32, y: u32) -> u32 {
    let r = rng.random_range(0..=a) | rng.random_range(x..=y);
    (r + c) % (y - x + 1) + x
}

/// The ten syllables of a last name (4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): its three digits' syllables.
pub(crate) fn last_name(n: u32) -> String {
    let mut s = String::with_capacity(15);
    for digit in [n / 100, n / 10 % 10, n % 10] {
        s.push_str(SYLLABLES[digit as usize]);
    }
    s
}

/// A loaded customer's last-name number: customers 1..=1000 take 0..=999 in order, the rest
/// NURand(255, 0, 999) (4.3.3.1).
pub(crate) fn load_last_number(rng: &mut impl Rng, c: &Constants, c_id: u32) -> u32 {
    if c_id <= 1000 {
        c_id - 1
    } else {
        nurand(rng, A_C_LAST, c.c_last, 0, 999)
    }
}

/// The characters of an a-string (random alphanumerics, 4.3.2.2).
const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// An a-string of a length drawn from `min..=max`.
pub(crate) fn a_string(rng: &mut impl Rng, min: usize, max: usize) -> String {
    let len = rng.random_range(min..=max);
    (0..len)
        .map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char)
        .collect()
}

/// An n-string (random digits) of a length drawn from `min..=max`.
pub(crate) fn n_string(rng: &mut impl Rng, min: usize, max: usize) -> String {
    let len = rng.random_range(min..=max);
    (0..len)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect()
}

/// A zip code: four random digits and "11111" (4.3.2.7).
pub(crate) fn zip(rng: &mut impl Rng) -> String {
    n_string(rng, 4, 4) + "11111"
}

/// i_data or s_data: an a-string of 26..=50 that in 10% of rows holds "ORIGINAL" at a random
/// place (4.3.3.1).
pub(crate) fn data_with_original(rng: &mut impl Rng) -> String {
    let mut s = a_string(rng, 26, 50);
    if rng.random_range(0..10) == 0 {
        let at = rng.random_range(0..=s.len() - 8);
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// The customer ids 1..=n in a random order: the o_c_id of a district's loaded orders.
pub(crate) fn permutation(rng: &mut impl Rng, n: u32) -> Vec<u32> {
    let mut ids: Vec<u32> = (1..=n).collect();
    ids.shuffle(rng);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn last_names_are_the_specifications_examples() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(40), "BARPRESBAR");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut hits = vec![0u32; 3000];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, A_C_ID, 259, 1, 3000);
            assert!((1..=3000).contains(&v));
            hits[(v - 1) as usize] += 1;
        }
        // Uniform would give 100 each; NURand's OR makes some ids several times likelier.
        let max = *hits.iter().max().unwrap();
        let min = *hits.iter().min().unwrap();
        assert!(max > 3 * min, "max {max} min {min}");
    }

    #[test]
    fn the_runs_c_last_keeps_the_allowed_distance() {
        let mut rng = SmallRng::seed_from_u64(7);
        for _ in 0..200 {
            let load = Constants::draw(&mut rng);
            let run = load.for_run(&mut rng);
            assert!(run_delta_ok(load.c_last, run.c_last));
            assert_eq!((run.c_id, run.ol_i_id), (load.c_id, load.ol_i_id));
        }
        assert!(!run_delta_ok(0, 96) && !run_delta_ok(0, 112) && !run_delta_ok(10, 20));
        assert!(run_delta_ok(223, 157));
    }

    #[test]
    fn strings_have_their_lengths_and_characters() {
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..100 {
            let a = a_string(&mut rng, 8, 16);
            assert!((8..=16).contains(&a.len()) && a.bytes().all(|b| b.is_ascii_alphanumeric()));
            let z = zip(&mut rng);
            assert!(z.len() == 9 && z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
        }
        let originals = (0..10_000)
            .filter(|_| data_with_original(&mut rng).contains("ORIGINAL"))
            .count();
        assert!((800..1200).contains(&originals), "{originals}");
    }

    #[test]
    fn load_names_cover_every_number_once_then_nurand() {
        let mut rng = SmallRng::seed_from_u64(5);
        let c = Constants::draw(&mut rng);
        let first: Vec<u32> = (1..=1000)
            .map(|id| load_last_number(&mut rng, &c, id))
            .collect();
        assert_eq!(first, (0..1000).collect::<Vec<_>>());
        assert!((1001..=3000).all(|id| load_last_number(&mut rng, &c, id) <= 999));
        let mut p = permutation(&mut rng, 3000);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
    }
}
