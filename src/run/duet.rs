//! Duet rounds (`repeat.duet`): the matrix's two servers run at the same time, each on its
//! own CPUs with its own worker, and each cell's measurement starts on both sides together,
//! so that whatever slows the host during a round slows both of its measurements. The two
//! workers follow the same schedule (one seed, the same cells), so they meet at every
//! (cell without its server, iteration) in the same order; a side that fails, skips or has
//! already measured a cell passes that meeting, and a side that has finished leaves, so the
//! other never waits for it.

use std::collections::HashMap;
use std::sync::Mutex;

use anyhow::Result;
use tokio::sync::Notify;

use super::backend::Backend;
use super::*;
use crate::model::Dimension;

/// Where the two sides of a duet meet, and the CPUs each side runs on in a round.
#[derive(Default)]
pub(super) struct Duet {
    state: Mutex<Meetings>,
    changed: Notify,
    /// The two servers' CPU sets, side A's and side B's.
    cpus: [Option<String>; 2],
    /// Whether the sides trade CPU sets every other round (a fresh server each round).
    swap: bool,
}

#[derive(Default)]
struct Meetings {
    /// How many sides reached each meeting.
    arrived: HashMap<(CellKey, u32), u8>,
    /// Sides that have finished their work.
    left: u8,
    /// The meetings a side is waiting at: two different ones would wait for each other
    /// forever (the sides' schedules differ, which `same_cells` refuses up front).
    waiting: Vec<(CellKey, u32)>,
}

/// The meeting of iteration `i` of `cell`: its dimensions but the server, and `i`.
fn meeting(cell: &Cell, i: u32) -> (CellKey, u32) {
    let dims = Dimension::ALL
        .into_iter()
        .filter(|d| *d != Dimension::Server);
    (CellKey::over(dims, |d| cell.get(d)), i)
}

impl Duet {
    /// The duet of `m`'s two servers.
    pub(super) fn of(m: &Matrix) -> Duet {
        let mut cpus = m.servers.values().map(|s| s.cpuset.clone());
        Duet {
            cpus: [cpus.next().flatten(), cpus.next().flatten()],
            swap: m.repeat.restart,
            ..Duet::default()
        }
    }

    /// The CPUs of `side` (0 for A, 1 for B) in round `round`: its own in odd rounds, the
    /// other side's in even ones when the servers restart every round, so that a CPU that
    /// is slower (the host's interrupts, a neighbour pinned to it) slows both sides alike.
    pub(super) fn cpus_of(&self, side: usize, round: u32) -> Option<String> {
        let traded = self.swap && round.is_multiple_of(2);
        self.cpus[(side + usize::from(traded)) % 2].clone()
    }

    /// This side will not measure iteration `i` of `cell` (failed, skipped or done before):
    /// the other side need not wait for it.
    pub(super) fn pass(&self, cell: &Cell, i: u32) {
        let mut s = self.state.lock().expect("duet lock");
        *s.arrived.entry(meeting(cell, i)).or_default() += 1;
        drop(s);
        self.changed.notify_waiters();
    }

    /// Wait until the other side reaches iteration `i` of `cell` too (or passes it, or has
    /// left); true when both are there to measure together.
    pub(super) async fn meet(&self, cell: &Cell, i: u32) -> bool {
        let key = meeting(cell, i);
        self.pass(cell, i);
        self.state
            .lock()
            .expect("duet lock")
            .waiting
            .push(key.clone());
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the state is read, so that no change between is missed.
            changed.as_mut().enable();
            {
                let mut s = self.state.lock().expect("duet lock");
                let together = s.arrived.get(&key).copied().unwrap_or(0) >= 2;
                let elsewhere = s.waiting.iter().any(|k| *k != key);
                if together || s.left > 0 || elsewhere {
                    // A meeting that took place waits for no one any more.
                    match together {
                        true => s.waiting.retain(|k| *k != key),
                        false => {
                            let mine = s.waiting.iter().position(|k| *k == key);
                            mine.map(|p| s.waiting.remove(p));
                        }
                    }
                    drop(s);
                    self.changed.notify_waiters();
                    return together;
                }
            }
            changed.await;
        }
    }

    /// This side has finished: the other measures the rest alone.
    pub(super) fn leave(&self) {
        self.state.lock().expect("duet lock").left += 1;
        self.changed.notify_waiters();
    }
}

/// Refuse a duet whose two sides would not measure the same cells in the same order: they
/// could never meet.
pub(super) fn same_cells(m: &Matrix, todo: &[Deployment]) -> Result<()> {
    let (a, b) = sides(m, todo);
    let cells = |side: &[Deployment]| -> Vec<Vec<(CellKey, u32)>> {
        (side.iter())
            .map(|d| d.cells.iter().map(|c| meeting(c, 0)).collect())
            .collect()
    };
    if !a.is_empty() && !b.is_empty() && cells(&a) != cells(&b) {
        return Err(crate::error::UsageError(
            "repeat.duet measures each cell on both servers at once: the two servers must have \
             the same configs and cells (an exclude, include or --only that keeps a cell of \
             one server only breaks the pairs)"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// The deployments of `todo` split by the matrix's two servers: side A's (the first
/// server's), then side B's, each in the plan's order.
pub(super) fn sides(m: &Matrix, todo: &[Deployment]) -> (Vec<Deployment>, Vec<Deployment>) {
    let first = m.servers.keys().next().cloned().unwrap_or_default();
    todo.iter().cloned().partition(|d| d.server == first)
}

/// Run the two sides at once, each with its own worker meeting the other at every cell.
pub(super) async fn run_duet<B: Backend>(
    mut a: RunCtx<'_, B>,
    mut b: RunCtx<'_, B>,
    todo: &[Deployment],
) -> Result<Option<String>> {
    let duet = Duet::of(&a.loaded.matrix);
    let (side_a, side_b) = sides(&a.loaded.matrix, todo);
    a.duet = Some((&duet, 0));
    b.duet = Some((&duet, 1));
    let (ra, rb) = tokio::join!(
        async {
            let r = a.run_deployments(&side_a).await;
            duet.leave();
            r
        },
        async {
            let r = b.run_deployments(&side_b).await;
            duet.leave();
            r
        }
    );
    ra?;
    rb?;
    Ok(a.lost.or(b.lost))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(server: &str) -> Cell {
        Cell {
            server: server.into(),
            config: "c".into(),
            engine: None,
            workload: "w".into(),
            concurrency: 4,
            rate: None,
        }
    }

    #[tokio::test]
    async fn both_sides_meet_and_a_side_that_passes_or_leaves_frees_the_other() {
        let duet = Duet::default();
        let (a, b) = (cell("a"), cell("b"));
        // Side A arrives first and waits; B's arrival lets both go.
        let (ta, tb) = tokio::join!(duet.meet(&a, 1), async {
            tokio::task::yield_now().await;
            duet.meet(&b, 1).await
        });
        assert!(ta && tb);
        // B failed round 2: A goes on, told it measured together (the failed row is B's).
        duet.pass(&b, 2);
        assert!(duet.meet(&a, 2).await);
        // Sides waiting at different meetings do not wait for each other forever.
        let c = Cell {
            config: "other".into(),
            ..cell("b")
        };
        let (ta, tb) = tokio::join!(duet.meet(&a, 4), async {
            tokio::task::yield_now().await;
            let met = duet.meet(&c, 4).await;
            duet.leave();
            met
        });
        assert!(!ta && !tb);
        // B has finished: A's round 5 does not wait.
        assert!(!duet.meet(&a, 5).await);
    }

    /// With a fresh server each round, the sides trade CPUs every other round.
    #[test]
    fn the_sides_trade_cpus_every_other_round_when_they_restart() {
        let mut duet = Duet {
            cpus: [Some("0".into()), Some("1".into())],
            swap: true,
            ..Duet::default()
        };
        let rounds = |d: &Duet, side| (1..=4).map(|r| d.cpus_of(side, r)).collect::<Vec<_>>();
        let (zero, one) = (Some("0".to_string()), Some("1".to_string()));
        assert_eq!(
            rounds(&duet, 0),
            [zero.clone(), one.clone(), zero.clone(), one.clone()]
        );
        assert_eq!(
            rounds(&duet, 1),
            [one.clone(), zero.clone(), one.clone(), zero.clone()]
        );
        // A server kept for every round keeps its CPUs.
        duet.swap = false;
        assert_eq!(
            rounds(&duet, 0),
            [zero.clone(), zero.clone(), zero.clone(), zero]
        );
        assert_eq!(
            rounds(&duet, 1),
            [one.clone(), one.clone(), one.clone(), one]
        );
    }
}
