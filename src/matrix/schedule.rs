//! The order in which (deployment, round) units run. A unit is one pass over a deployment's
//! cells. Sequential runs every round of A before B; interleaved alternates A B A B so that
//! slow drift (thermal, page cache, a noisy neighbour) spreads over all variants instead of
//! looking like a difference between them; shuffled draws each round's order from a seed.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::model::Order;

/// (deployment index, round) in execution order; rounds are 1-based.
pub(crate) fn schedule(
    deployments: usize,
    rounds: u32,
    order: Order,
    seed: u64,
) -> Vec<(usize, u32)> {
    let mut out = Vec::with_capacity(deployments * rounds as usize);
    match order {
        Order::Sequential => {
            for d in 0..deployments {
                out.extend((1..=rounds).map(|r| (d, r)));
            }
        }
        Order::Interleaved | Order::Shuffled => {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            for r in 1..=rounds {
                let mut ds: Vec<usize> = (0..deployments).collect();
                if order == Order::Shuffled {
                    ds.shuffle(&mut rng);
                }
                out.extend(ds.into_iter().map(|d| (d, r)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        assert_eq!(
            schedule(2, 2, Order::Sequential, 0),
            [(0, 1), (0, 2), (1, 1), (1, 2)]
        );
        assert_eq!(
            schedule(2, 2, Order::Interleaved, 0),
            [(0, 1), (1, 1), (0, 2), (1, 2)]
        );
        let a = schedule(4, 3, Order::Shuffled, 7);
        assert_eq!(
            a,
            schedule(4, 3, Order::Shuffled, 7),
            "the seed pins the order"
        );
        assert_ne!(a, schedule(4, 3, Order::Shuffled, 8));
        for r in 1..=3 {
            let mut round: Vec<usize> = a.iter().filter(|u| u.1 == r).map(|u| u.0).collect();
            round.sort();
            assert_eq!(round, [0, 1, 2, 3], "every deployment once per round");
        }
    }
}
