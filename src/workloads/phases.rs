//! The load loop every driver that talks to its server itself shares (slap, oltp, redis):
//! the warm-up between its edges, the driver's counters read before, the measured phase
//! between the window's edges, the counters read after (`Phases::run`); and how one phase
//! starts (`Begin`, `Started`): open loop's pacer, the per-second clock shown on the status
//! line, the deadline of a timed length or each client's share of a counted one. A driver
//! plugs in its clients and its counter reads (`Load`), running its clients on OS threads
//! (`on_threads`) or as tasks (`on_tasks`); the request loops stay in its clients, which
//! read the phase's `Until` and `Seconds` once, when they start.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Result};

use super::pace::{Pace, PaceStats, Pacer, Tickets, Until};
use super::threads;
use super::Iteration;
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::interval::Sample;
use crate::measure::seconds::{Live, Seconds};

/// The percentile of the per-second lines (sysbench's `--percentile` default).
pub(crate) const SAMPLE_PERCENTILE: f64 = 95.0;

/// The edges the phases mark: the warm-up's and the measured phase's (`Window`).
pub(crate) trait Edges: Sync {
    fn warmup_open(&self);
    fn warmup_close(&self);
    fn open(&self);
    fn close(&self);
}

impl Edges for Window {
    fn warmup_open(&self) {
        Window::warmup_open(self);
    }
    fn warmup_close(&self) {
        Window::warmup_close(self);
    }
    fn open(&self) {
        Window::open(self);
    }
    fn close(&self) {
        Window::close(self);
    }
}

/// A driver's part of an iteration: what its clients do in a phase, and what it reads
/// around the measured one (the server's counters, in the order its family needs).
pub(crate) trait Load: Send {
    /// The clients, moved into each phase and given back at its end.
    type Clients: Send;
    /// What one phase's clients counted.
    type Tally: Send;
    /// What `before` read.
    type Before: Send;
    /// What `after` read.
    type After: Send;

    /// Run `clients` through one phase that `begin` starts (`on_threads`, `on_tasks`).
    fn phase(
        &mut self,
        clients: Self::Clients,
        begin: Begin,
    ) -> impl Future<Output = Result<(Self::Clients, Ran<Self::Tally>)>> + Send;

    /// Right after the warm-up's closing edge, whether it ran well or not.
    fn warmed_up(&mut self) -> impl Future<Output = Result<()>> + Send {
        async { Ok(()) }
    }

    /// Right before the measured phase's opening edge: the counters it starts from.
    fn before(
        &mut self,
        clients: Self::Clients,
    ) -> impl Future<Output = Result<(Self::Clients, Self::Before)>> + Send;

    /// Right after its closing edge, whether it ran well or not: the counters it ends at.
    /// It may take the clients from `measured` (a family that counts a client at its exit
    /// closes them first) or put an error there.
    fn after(
        &mut self,
        measured: &mut Result<(Self::Clients, Ran<Self::Tally>)>,
    ) -> impl Future<Output = Result<Self::After>> + Send;
}

/// What an iteration's phases run for, and the edges they mark.
pub(crate) struct Phases<'a, E = Window> {
    /// Load run before the measured phase and discarded.
    pub(crate) warmup: Option<Length>,
    pub(crate) length: Length,
    /// Open loop: each phase's pacer runs on it.
    pub(crate) pace: Option<&'a Pace>,
    /// Where the measured phase's seconds are shown (the status line).
    pub(crate) shown: Option<&'a Arc<Live>>,
    pub(crate) edges: &'a E,
}

impl<'a> Phases<'a> {
    /// The phases of `it`, on its window.
    pub(crate) fn of(it: &Iteration<'a>) -> Phases<'a> {
        Phases {
            warmup: it.warmup,
            length: it.length,
            pace: it.pace,
            shown: it.phase,
            edges: it.window,
        }
    }
}

/// What an iteration's phases gave.
pub(crate) struct Outcome<L: Load> {
    /// The clients, back from the measured phase (unless `after` took them).
    pub(crate) clients: L::Clients,
    pub(crate) warmup: Option<Ran<L::Tally>>,
    pub(crate) before: L::Before,
    pub(crate) measured: Ran<L::Tally>,
    pub(crate) after: L::After,
}

impl<E: Edges> Phases<'_, E> {
    /// [warm-up between its edges -> `warmed_up`] -> `before` -> open -> measured phase ->
    /// close -> `after`. A failed measured phase's edge is closed and `after` runs; then its
    /// error comes first.
    pub(crate) async fn run<L: Load>(
        &self,
        load: &mut L,
        mut clients: L::Clients,
    ) -> Result<Outcome<L>> {
        let mut warmup = None;
        if let Some(length) = self.warmup {
            self.edges.warmup_open();
            let warmed = load.phase(clients, self.begin(length, None)).await;
            self.edges.warmup_close();
            load.warmed_up().await?;
            let (back, ran) = warmed?;
            (clients, warmup) = (back, Some(ran));
        }
        let (clients, before) = load.before(clients).await?;
        self.edges.open();
        let begin = self.begin(self.length, self.shown);
        let mut measured = load.phase(clients, begin).await;
        self.edges.close();
        let after = load.after(&mut measured).await;
        let (clients, measured) = measured?;
        Ok(Outcome {
            clients,
            warmup,
            before,
            measured,
            after: after?,
        })
    }

    fn begin(&self, length: Length, shown: Option<&Arc<Live>>) -> Begin {
        Begin {
            length,
            pace: self.pace.cloned(),
            shown: shown.cloned(),
        }
    }
}

/// How one phase starts, once its clients are ready (`on_threads`, `on_tasks`).
#[derive(Clone)]
pub(crate) struct Begin {
    length: Length,
    pace: Option<Pace>,
    /// The measured phase's seconds are shown here.
    shown: Option<Arc<Live>>,
}

impl Begin {
    /// The total a closed loop's clients share when they draw from one budget instead of
    /// splitting it (oltp, as sysbench's `--events`); None for a timed or paced phase.
    pub(crate) fn shared_count(&self) -> Option<u64> {
        match (self.length, &self.pace) {
            (Length::Queries(n), None) => Some(n),
            _ => None,
        }
    }

    /// The phase starts at `at` with `clients` clients: the pacer's releases, the clock and
    /// the deadline run from there.
    fn start(&self, at: Instant, clients: usize) -> Result<(Started, Option<Pacer>)> {
        let pacer = (self.pace.as_ref())
            .map(|p| Pacer::start(p, self.length))
            .transpose()?;
        let seconds = Seconds::new(at);
        if let Some(live) = &self.shown {
            live.set(&seconds);
        }
        let started = Started {
            seconds,
            deadline: self.length.as_duration().map(|d| at + d),
            tickets: pacer.as_ref().map(Pacer::tickets),
            length: self.length,
            clients,
        };
        Ok((started, pacer))
    }
}

/// A phase that has started, as its clients read it when they begin.
pub(crate) struct Started {
    /// The phase's per-second statistics: one `recorder()` per client.
    pub(crate) seconds: Arc<Seconds>,
    /// A timed phase ends here.
    pub(crate) deadline: Option<Instant>,
    /// Open loop: the arrivals, which end the phase.
    pub(crate) tickets: Option<Tickets>,
    length: Length,
    clients: usize,
}

impl Started {
    /// When client `i` stops: at the pacer's end, or after its share of a count, or at the
    /// deadline.
    pub(crate) fn until(&self, i: usize) -> Until {
        match &self.tickets {
            Some(t) => Until::Paced(t.clone()),
            None => Until::Closed {
                share: self.length.share(i, self.clients),
                deadline: self.deadline,
            },
        }
    }
}

/// What one phase gave: its clients' tally, its per-second statistics, its wall time from
/// the start to the last client's end, and in open loop what the pacer saw.
pub(crate) struct Ran<T> {
    pub(crate) tally: T,
    pub(crate) seconds: Arc<Seconds>,
    pub(crate) elapsed: f64,
    pub(crate) open: Option<PaceStats>,
}

impl<T> Ran<T> {
    /// One line per complete second, for `clients` clients.
    pub(crate) fn samples(&self, clients: u32) -> Vec<Sample> {
        (self.seconds).samples(self.elapsed, clients, SAMPLE_PERCENTILE)
    }
}

impl<C, R> Ran<Vec<(C, R)>> {
    /// Each client's own part taken out of a tally of (client, result) pairs.
    pub(crate) fn unzip(self) -> (Vec<C>, Ran<Vec<R>>) {
        let (clients, tally) = self.tally.into_iter().unzip();
        let ran = Ran {
            tally,
            seconds: self.seconds,
            elapsed: self.elapsed,
            open: self.open,
        };
        (clients, ran)
    }
}

/// One phase with each of `items` on its own OS thread named `{name}-{index}`
/// (`threads::gated`: starting the threads is not measured), `work` given each its index and
/// the started phase; call it off the async runtime (`threads::blocking`). Also how many
/// threads panicked (their outputs are missing).
pub(crate) fn on_threads<I: Send, O: Send>(
    name: &str,
    items: Vec<I>,
    begin: &Begin,
    work: impl Fn(usize, I, &Started) -> O + Sync,
) -> Result<(Ran<Vec<O>>, usize)> {
    let n = items.len();
    let mut pacer = None;
    let ran = threads::gated(
        name,
        items,
        |at| {
            let (started, p) = begin.start(at, n)?;
            pacer = p;
            Ok(started)
        },
        |i, item, started| started.map(|s| work(i, item, s)),
    );
    let panicked = ran.panicked;
    let started = match (ran.error, ran.state) {
        (Some(e), _) => return Err(e),
        (None, Some(started)) => started,
        (None, None) => return Err(anyhow!("the phase did not start")),
    };
    let ran = Ran {
        tally: ran.outputs.into_iter().flatten().collect(),
        seconds: started.seconds,
        elapsed: ran.elapsed,
        open: pacer.map(Pacer::finish),
    };
    Ok((ran, panicked))
}

/// One phase with each of `items` as a future that `client` makes from its index and the
/// started phase, all of them awaited together on this task.
pub(crate) async fn on_tasks<I, O, F: Future<Output = O>>(
    items: Vec<I>,
    begin: &Begin,
    mut client: impl FnMut(usize, I, &Started) -> F,
) -> Result<Ran<Vec<O>>> {
    let at = Instant::now();
    let (started, pacer) = begin.start(at, items.len())?;
    let runs = (items.into_iter().enumerate()).map(|(i, item)| client(i, item, &started));
    let tally = futures_util::future::join_all(runs).await;
    let elapsed = at.elapsed().as_secs_f64();
    Ok(Ran {
        tally,
        seconds: started.seconds,
        elapsed,
        open: pacer.map(Pacer::finish),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::arrival::{Shape, Spacing};
    use std::sync::Mutex;
    use std::time::Duration;

    /// The edges and hooks in the order they came.
    #[derive(Default)]
    struct Log(Mutex<Vec<&'static str>>);

    impl Log {
        fn push(&self, what: &'static str) {
            self.0.lock().unwrap().push(what);
        }
        fn take(&self) -> Vec<&'static str> {
            std::mem::take(&mut self.0.lock().unwrap())
        }
    }

    impl Edges for Log {
        fn warmup_open(&self) {
            self.push("warmup_open");
        }
        fn warmup_close(&self) {
            self.push("warmup_close");
        }
        fn open(&self) {
            self.push("open");
        }
        fn close(&self) {
            self.push("close");
        }
    }

    /// A client that sends nothing: each turn is one operation, until its `Until` says stop.
    fn turns(until: &Until) -> u64 {
        let mut done = 0;
        loop {
            match until {
                Until::Closed { share, deadline } => {
                    if share.is_some_and(|s| done >= s)
                        || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        return done;
                    }
                    std::thread::sleep(Duration::from_micros(100));
                }
                Until::Paced(t) if t.next_blocking().is_none() => return done,
                Until::Paced(_) => {}
            }
            done += 1;
        }
    }

    /// `turns` as a task.
    async fn turns_async(until: Until) -> u64 {
        let mut done = 0;
        loop {
            match &until {
                Until::Closed { share, deadline } => {
                    if share.is_some_and(|s| done >= s)
                        || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        return done;
                    }
                    tokio::time::sleep(Duration::from_micros(100)).await;
                }
                Until::Paced(t) if t.next().await.is_none() => return done,
                Until::Paced(_) => {}
            }
            done += 1;
        }
    }

    /// Clients in process, on threads or as tasks; their tally is each one's turns.
    struct Trivial<'a> {
        log: &'a Log,
        tasks: bool,
        fail_measured: bool,
        phases: u32,
    }

    impl Load for Trivial<'_> {
        type Clients = Vec<u32>;
        type Tally = Vec<u64>;
        type Before = &'static str;
        type After = &'static str;

        async fn phase(
            &mut self,
            clients: Vec<u32>,
            begin: Begin,
        ) -> Result<(Vec<u32>, Ran<Vec<u64>>)> {
            self.log.push("phase");
            self.phases += 1;
            if self.fail_measured && self.phases == 2 {
                anyhow::bail!("the server went away");
            }
            let back = clients.clone();
            let ran = match self.tasks {
                true => on_tasks(clients, &begin, |i, _, s| turns_async(s.until(i))).await?,
                false => on_threads("t", clients, &begin, |i, _, s| turns(&s.until(i)))?.0,
            };
            Ok((back, ran))
        }

        async fn warmed_up(&mut self) -> Result<()> {
            self.log.push("warmed_up");
            Ok(())
        }

        async fn before(&mut self, clients: Vec<u32>) -> Result<(Vec<u32>, &'static str)> {
            self.log.push("before");
            Ok((clients, "counters before"))
        }

        async fn after(
            &mut self,
            measured: &mut Result<(Vec<u32>, Ran<Vec<u64>>)>,
        ) -> Result<&'static str> {
            self.log.push(if measured.is_ok() {
                "after"
            } else {
                "after a failure"
            });
            Ok("counters after")
        }
    }

    fn trivial(log: &Log, tasks: bool) -> Trivial<'_> {
        Trivial {
            log,
            tasks,
            fail_measured: false,
            phases: 0,
        }
    }

    fn phases<'a>(log: &'a Log, warmup: Option<u64>, length: u64) -> Phases<'a, Log> {
        Phases {
            warmup: warmup.map(Length::Queries),
            length: Length::Queries(length),
            pace: None,
            shown: None,
            edges: log,
        }
    }

    #[tokio::test]
    async fn the_warmup_the_reads_and_the_measured_phase_come_in_order() {
        let log = Log::default();
        let got = phases(&log, Some(6), 9)
            .run(&mut trivial(&log, false), vec![0, 1, 2])
            .await
            .unwrap();
        assert_eq!(
            log.take(),
            [
                "warmup_open",
                "phase",
                "warmup_close",
                "warmed_up",
                "before",
                "open",
                "phase",
                "close",
                "after"
            ]
        );
        assert_eq!(got.warmup.map(|w| w.tally), Some(vec![2, 2, 2]));
        assert_eq!(got.measured.tally, [3, 3, 3]);
        assert_eq!(
            (got.before, got.after),
            ("counters before", "counters after")
        );
        assert_eq!(got.clients, [0, 1, 2]);
        assert!(got.measured.open.is_none());
    }

    #[tokio::test]
    async fn without_a_warmup_there_is_no_warmup_phase_nor_its_edges() {
        let log = Log::default();
        let got = phases(&log, None, 4)
            .run(&mut trivial(&log, true), vec![0, 1])
            .await
            .unwrap();
        assert_eq!(log.take(), ["before", "open", "phase", "close", "after"]);
        assert!(got.warmup.is_none());
        assert_eq!(got.measured.tally, [2, 2]);
    }

    #[tokio::test]
    async fn a_failed_measured_phase_still_closes_its_edge_and_reads_after() {
        let log = Log::default();
        let mut load = Trivial {
            fail_measured: true,
            ..trivial(&log, false)
        };
        let err = phases(&log, Some(2), 4).run(&mut load, vec![0]).await;
        assert_eq!(err.err().unwrap().to_string(), "the server went away");
        assert_eq!(
            &log.take()[4..],
            ["before", "open", "phase", "close", "after a failure"]
        );
    }

    #[tokio::test]
    async fn a_counted_length_is_split_into_shares_on_threads_and_tasks() {
        for tasks in [false, true] {
            let log = Log::default();
            let got = phases(&log, None, 10)
                .run(&mut trivial(&log, tasks), vec![0, 1, 2])
                .await
                .unwrap();
            assert_eq!(got.measured.tally, [4, 3, 3], "tasks: {tasks}");
        }
    }

    #[tokio::test]
    async fn a_timed_phase_runs_to_its_deadline() {
        let log = Log::default();
        let got = Phases {
            length: Length::Time(Duration::from_millis(50)),
            ..phases(&log, None, 0)
        }
        .run(&mut trivial(&log, false), vec![0, 1])
        .await
        .unwrap();
        assert!(got.measured.elapsed >= 0.05, "{}", got.measured.elapsed);
        assert!(
            got.measured.tally.iter().all(|&n| n > 0),
            "{:?}",
            got.measured.tally
        );
    }

    #[tokio::test]
    async fn open_loop_gives_the_pacers_stats() {
        let pace = Pace {
            shape: Shape::Constant(2000.0),
            spacing: Spacing::Even,
            seed: 1,
        };
        for tasks in [false, true] {
            let log = Log::default();
            let got = Phases {
                pace: Some(&pace),
                ..phases(&log, Some(10), 40)
            }
            .run(&mut trivial(&log, tasks), vec![0, 1])
            .await
            .unwrap();
            let open = got.measured.open.unwrap();
            assert_eq!(
                (open.scheduled, open.started),
                (Some(40), 40),
                "tasks: {tasks}"
            );
            assert_eq!(got.measured.tally.iter().sum::<u64>(), 40);
            assert_eq!(got.warmup.unwrap().open.unwrap().started, 10);
        }
    }

    #[test]
    fn only_a_counted_closed_loop_has_a_shared_count() {
        let begin = |length, pace| Begin {
            length,
            pace,
            shown: None,
        };
        let pace = Pace {
            shape: Shape::Constant(10.0),
            spacing: Spacing::Even,
            seed: 1,
        };
        let second = Length::Time(Duration::from_secs(1));
        assert_eq!(begin(Length::Queries(7), None).shared_count(), Some(7));
        assert_eq!(begin(Length::Queries(7), Some(pace)).shared_count(), None);
        assert_eq!(begin(second, None).shared_count(), None);
    }
}
