//! One terminal (clause 2.4.1.1): a connection on its own OS thread with a home warehouse,
//! dealing transactions from its deck until the phase ends. A deadlock or serialization
//! failure rolls back and runs the same transaction again (counted as a retry); a lost
//! connection or any other error stops the terminal with its message. Each transaction's
//! latency spans its retries, as BenchBase's does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::Rng;

use super::mix::{Deck, Txn};
use super::spec::{Think, TpccSpec};
use super::txn::{Ended, Input, Sent, Session, Terminal};
use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::servers::sql::{Failure, SqlClient};
use crate::workloads::pace::Until;
use crate::workloads::phases::Started;

/// Retries of one transaction before the terminal gives up on it (a livelock, not contention).
const MAX_RETRIES: u32 = 1_000;

/// What one transaction type came to on a terminal.
#[derive(Debug, Default, Clone)]
pub(crate) struct ByType {
    pub(crate) committed: u64,
    /// New-Order's intended rollbacks (2.4.1.4).
    pub(crate) rolled_back: u64,
    /// Deadlocks and serialization failures, each followed by the same transaction again.
    pub(crate) retries: u64,
    /// Statements sent for this type, retries included.
    pub(crate) sent: Sent,
    pub(crate) latency: Latency,
}

impl ByType {
    /// `other`'s counts added to these (the terminals' together).
    pub(crate) fn add(&mut self, other: &ByType) {
        self.committed += other.committed;
        self.rolled_back += other.rolled_back;
        self.retries += other.retries;
        self.sent = self.sent.plus(&other.sent);
        self.latency.merge(&other.latency);
    }
}

/// A terminal's totals for a phase.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) by_type: [ByType; 5],
    pub(crate) sent: Sent,
    pub(crate) latency: Latency,
    /// Open loop: from each transaction's first statement to its end.
    pub(crate) service: Option<Latency>,
    pub(crate) first_error: Option<String>,
    /// The error that stopped the terminal, if one did.
    pub(crate) fatal: Option<String>,
}

/// A terminal's connection and state, kept from phase to phase.
pub(crate) struct Desk<C: SqlClient> {
    pub(crate) session: Session<C>,
    pub(crate) terminal: Terminal,
    deck: Deck,
    rng: SmallRng,
    think: Think,
}

impl<C: SqlClient> Desk<C> {
    pub(crate) fn new(
        session: Session<C>,
        terminal: Terminal,
        spec: &TpccSpec,
        rng: SmallRng,
    ) -> Desk<C> {
        Desk {
            session,
            terminal,
            deck: Deck::new(spec.weights.cards()),
            rng,
            think: spec.think,
        }
    }

    /// Transactions until the phase ends for terminal `i`; each counted in `live` as it ends.
    pub(crate) fn run(
        &mut self,
        i: usize,
        phase: &Started,
        live: &AtomicU64,
        cancelled: &AtomicBool,
    ) -> Tally {
        let until = phase.until(i);
        let mut rec = phase.seconds.recorder();
        let mut tally = Tally::default();
        let sent_before = self.session.sent;
        let mut done = 0u64;
        while !cancelled.load(Ordering::Relaxed) {
            // The latency's origin: the intended start in open loop, the send in closed loop.
            let intended = match &until {
                Until::Closed { share, deadline } => {
                    if share.is_some_and(|s| done >= s)
                        || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        break;
                    }
                    None
                }
                Until::Paced(t) => match t.next_blocking() {
                    Some(at) => Some(at),
                    None => break,
                },
            };
            let txn = self.deck.deal(&mut self.rng);
            if self.think == Think::Spec {
                self.keying_and_thinking(txn, phase);
            }
            let input = Input::draw(txn, &self.terminal, &mut self.rng);
            let (t0, sent0) = (Instant::now(), self.session.sent);
            let retries0 = tally.by_type[txn.index()].retries;
            let ended = self.attempt(&input, &mut tally.by_type[txn.index()]);
            let by_type = &mut tally.by_type[txn.index()];
            let sent = self.session.sent.since(&sent0);
            by_type.sent = by_type.sent.plus(&sent);
            let end = Instant::now();
            done += 1;
            let us = end.duration_since(intended.unwrap_or(t0)).as_micros() as u64;
            // This second's statements and retries; the transaction is its event, which
            // `event` adds (samples.csv's tps), a failed one none.
            let mut counts = Counts {
                reads: sent.select,
                writes: sent.update + sent.insert + sent.delete,
                others: sent.begin + sent.commit + sent.rollback,
                errors: by_type.retries - retries0,
                ..Counts::default()
            };
            match ended {
                Ok(ended) => {
                    let t = &mut tally.by_type[txn.index()];
                    match ended {
                        Ended::Committed => t.committed += 1,
                        Ended::RolledBack => t.rolled_back += 1,
                    }
                    t.latency.record_us(us);
                    tally.latency.record_us(us);
                    if intended.is_some() {
                        let service = end.duration_since(t0).as_micros() as u64;
                        tally
                            .service
                            .get_or_insert_with(Latency::default)
                            .record_us(service);
                    }
                    rec.event(end, us, &counts);
                    live.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    counts.errors += 1;
                    rec.counts(end, &counts);
                    tally.first_error.get_or_insert(e.clone());
                    tally.fatal = Some(e);
                    break;
                }
            }
        }
        tally.sent = self.session.sent.since(&sent_before);
        tally
    }

    /// The transaction, run again after each deadlock or serialization failure.
    fn attempt(&mut self, input: &Input, t: &mut ByType) -> Result<Ended, String> {
        for _ in 0..MAX_RETRIES {
            match input.run(&mut self.session, &self.terminal) {
                Ok(ended) => return Ok(ended),
                Err((Failure::Ignored, _)) => {
                    t.retries += 1;
                    self.session.abandon().map_err(|(_, e)| e)?;
                }
                Err((Failure::Lost, e)) => return Err(format!("the connection was lost: {e}")),
                Err((Failure::Fatal, e)) => return Err(e),
            }
        }
        Err(format!("a transaction failed {MAX_RETRIES} times in a row on deadlocks or serialization failures"))
    }

    /// Clause 5.2.5: the transaction's keying and think times before it is sent, cut short
    /// where the phase ends.
    fn keying_and_thinking(&mut self, txn: Txn, phase: &Started) {
        let mut wait = keying_and_think_time(txn, &mut self.rng);
        if let Some(deadline) = phase.deadline {
            wait = wait.min(deadline.saturating_duration_since(Instant::now()));
        }
        std::thread::sleep(wait);
    }
}

/// Clause 5.2.5.7's keying time and mean think time of each transaction, in seconds.
fn keying_and_mean_think(txn: Txn) -> (f64, f64) {
    match txn {
        Txn::NewOrder => (18.0, 12.0),
        Txn::Payment => (3.0, 12.0),
        Txn::OrderStatus => (2.0, 10.0),
        Txn::Delivery => (2.0, 5.0),
        Txn::StockLevel => (2.0, 5.0),
    }
}

/// The keying time plus a think time drawn from a negative exponential of the type's mean
/// and cut at ten times the mean (clause 5.2.5.4).
fn keying_and_think_time(txn: Txn, rng: &mut impl Rng) -> Duration {
    let (keying, mean) = keying_and_mean_think(txn);
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    let think = (-u.ln() * mean).min(10.0 * mean);
    Duration::from_secs_f64(keying + think)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn think_times_have_the_specifications_mean_and_cap() {
        let mut rng = SmallRng::seed_from_u64(5);
        for txn in Txn::ALL {
            let (keying, mean) = keying_and_mean_think(txn);
            let n = 200_000;
            let thinks: Vec<f64> = (0..n)
                .map(|_| keying_and_think_time(txn, &mut rng).as_secs_f64() - keying)
                .collect();
            let avg = thinks.iter().sum::<f64>() / n as f64;
            // The cut at 10x the mean lowers it by e^-10 of itself: 1% is 4 standard errors.
            assert!((avg / mean - 1.0).abs() < 0.01, "{txn:?}: mean {avg}");
            let (lo, hi) = thinks
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), &t| (l.min(t), h.max(t)));
            assert!(lo >= 0.0 && hi <= 10.0 * mean + 1e-9, "{txn:?}: {lo}..{hi}");
        }
    }

    #[test]
    fn the_cap_holds_for_the_smallest_draw() {
        // u at f64::MIN_POSITIVE would think for 708 means without the cut.
        struct Lowest;
        impl rand::RngCore for Lowest {
            fn next_u32(&mut self) -> u32 {
                0
            }
            fn next_u64(&mut self) -> u64 {
                0
            }
            fn fill_bytes(&mut self, dst: &mut [u8]) {
                dst.fill(0)
            }
        }
        let longest = keying_and_think_time(Txn::NewOrder, &mut Lowest);
        assert_eq!(longest, Duration::from_secs(18 + 120));
    }
}
