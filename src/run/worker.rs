//! One engine's worker: runs deployments round by round, their cells, the adaptive repeats and
//! what the sweeps ask for; failures are rows, and the run goes on.

use std::collections::HashMap;
use std::sync::Mutex;

use anyhow::Result;

use super::backend::Backend;
use super::*;
use crate::matrix::Length;
use crate::measure::interval::Sample;
use crate::measure::pressure::CpuPressure;

pub(super) struct RunCtx<'a, B: Backend> {
    pub(super) loaded: &'a LoadedMatrix,
    pub(super) dir: &'a RunDir,
    pub(super) done: &'a Done,
    /// This worker's engine's name in a pooled run (results.csv's `docker_engine`), None
    /// for one engine.
    pub(super) engine_name: Option<String>,
    pub(super) progress: &'a Progress,
    /// Shared by the pool's workers; never held across an await.
    pub(super) man: &'a Mutex<Manifest>,
    /// Seed of the shuffled order (recorded in the manifest).
    pub(super) seed: u64,
    /// Why this worker's engine stopped answering, once it did: it takes no more work.
    pub(super) lost: Option<String>,
    /// (cell, iteration) pairs this attempt has measured or tried (a sweep measures some
    /// levels' later iterations early; their rounds then leave them be).
    pub(super) measured: Done,
    /// Everything outside the loop: servers, measurements, the engine, the clock.
    pub(super) backend: B,
    /// Where this worker meets the other side of a duet (`repeat.duet`) and which side it
    /// is (0 for A, 1 for B); None otherwise.
    pub(super) duet: Option<(&'a duet::Duet, usize)>,
}

/// What every worker of a run shares.
pub(super) struct RunShared<'a> {
    pub(super) loaded: &'a LoadedMatrix,
    pub(super) dir: &'a RunDir,
    pub(super) done: &'a Done,
    pub(super) run_id: &'a str,
    pub(super) instance: &'a str,
    pub(super) progress: &'a Progress,
    pub(super) man: &'a Mutex<Manifest>,
    pub(super) seed: u64,
    /// Pooled across engines (`--engine`, `--engines`): results name each row's engine.
    pub(super) pooled: bool,
    /// The engine every client container runs on (`client_engine:` of a hosts file).
    pub(super) client_engine: Option<&'a Engine>,
}

impl<'a> RunShared<'a> {
    /// The name results give `engine`'s rows: only a pool names its engines.
    pub(super) fn engine_name(&self, engine: Option<&Engine>) -> Option<String> {
        match self.pooled {
            true => engine.map(|e| e.name().to_string()),
            false => None,
        }
    }
}

impl<'a, B: Backend> RunCtx<'a, B> {
    /// The worker that runs its deployments on `backend` (named `engine_name` in a pool).
    pub(super) fn new(s: &RunShared<'a>, engine_name: Option<String>, backend: B) -> Self {
        RunCtx {
            loaded: s.loaded,
            dir: s.dir,
            done: s.done,
            engine_name,
            progress: s.progress,
            man: s.man,
            seed: s.seed,
            lost: None,
            measured: Done::new(),
            backend,
            duet: None,
        }
    }
}

/// Servers of this run by deployment index: running, or failed with a reason.
#[derive(Default)]
pub(super) struct Servers {
    pub(super) live: HashMap<usize, Deployed>,
    pub(super) failed: HashMap<usize, String>,
}

impl<B: Backend> RunCtx<'_, B> {
    /// Run every (deployment, round) unit in the order the matrix asks for, then the
    /// adaptive repeats. A server lives from its first unit to its last (or one unit, with
    /// `restart`); a deployment that failed to start fails its later units the same way.
    pub(super) async fn run_deployments(&mut self, todo: &[Deployment]) -> Result<()> {
        let m = &self.loaded.matrix;
        let units = schedule(todo.len(), m.iterations, m.repeat.order, self.seed);
        let last_unit: HashMap<usize, usize> = units
            .iter()
            .enumerate()
            .map(|(pos, (d, _))| (*d, pos))
            .collect();
        let mut servers = Servers::default();
        let mut ran_any = false;
        for (pos, &(di, round)) in units.iter().enumerate() {
            let d = &todo[di];
            let (done, cells): (Vec<&Cell>, Vec<&Cell>) =
                d.cells.iter().partition(|c| self.is_done(c, round));
            if let Some((duet, side)) = self.duet {
                done.iter().for_each(|c| duet.pass(c, round));
                self.backend.place(duet.cpus_of(side, round));
            }
            let cells: Vec<(Cell, u32)> = cells.into_iter().map(|c| (c.clone(), round)).collect();
            if !cells.is_empty() {
                if ran_any {
                    self.cooldown().await;
                }
                ran_any = true;
                self.run_unit(d, di, &cells, &mut servers).await?;
            }
            if m.repeat.restart || last_unit[&di] == pos {
                self.stop(d, di, &mut servers).await?;
            }
        }
        self.adaptive_repeats(todo, &mut servers).await?;
        for (di, d) in todo.iter().enumerate() {
            self.stop(d, di, &mut servers).await?;
        }
        Ok(())
    }

    pub(super) async fn cooldown(&self) {
        if let Some(d) = self
            .loaded
            .matrix
            .repeat
            .cooldown
            .and_then(|l| l.as_duration())
        {
            self.progress
                .status(format!("cooling down {}s", d.as_secs_f64()));
            self.backend.pause(d).await;
        }
    }

    /// Keep repeating cells whose report metric varies more than `until_cv` percent, or whose
    /// change against the baseline is wider than `until_interval` (with their baseline cells),
    /// one round at a time, until they settle, reach `max_iterations` or use up `max_time`.
    pub(super) async fn adaptive_repeats(
        &mut self,
        todo: &[Deployment],
        servers: &mut Servers,
    ) -> Result<()> {
        let m = &self.loaded.matrix;
        if !adaptive(m) {
            return Ok(());
        }
        let max_iterations = m.repeat.max_iterations.unwrap_or(10).max(m.iterations);
        let deadline = m
            .repeat
            .max_time
            .and_then(|l| l.as_duration())
            .map(|d| self.backend.now() + d);
        for round in m.iterations + 1..=max_iterations {
            if deadline.is_some_and(|d| self.backend.now() >= d) {
                self.progress
                    .line("adaptive repeats: time budget used up".into());
                break;
            }
            let rows = self.dir.rows()?;
            let wants = Wants::read(m, &rows);
            let noisy = |c: &Cell| wants.more(m, &c.key(), &rows);
            let units = schedule(
                todo.len(),
                1,
                m.repeat.order,
                self.seed.wrapping_add(round as u64),
            );
            // Some cell is still noisy (it may already have this round's row from before a
            // resume: one result per iteration, so that row is kept, not measured again).
            let mut any = false;
            for (di, _) in units {
                let d = &todo[di];
                let noisy_cells: Vec<&Cell> = d.cells.iter().filter(|c| noisy(c)).collect();
                any |= !noisy_cells.is_empty();
                let cells: Vec<(Cell, u32)> = noisy_cells
                    .into_iter()
                    .filter(|c| !self.is_done(c, round))
                    .map(|c| (c.clone(), round))
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                if round > 1 {
                    self.cooldown().await;
                }
                self.progress.add(cells.len() as u64);
                self.run_unit(d, di, &cells, servers).await?;
                if m.repeat.restart {
                    self.stop(d, di, servers).await?;
                }
            }
            if !any {
                break;
            }
        }
        Ok(())
    }

    /// One pass over `cells` of deployment `d`, starting its server when it is not running.
    pub(super) async fn run_unit(
        &mut self,
        d: &Deployment,
        di: usize,
        cells: &[(Cell, u32)],
        servers: &mut Servers,
    ) -> Result<()> {
        if let Some(reason) = servers.failed.get(&di) {
            return self.fail_cells(cells, &reason.clone());
        }
        if let Entry::Vacant(slot) = servers.live.entry(di) {
            match self.start(d).await? {
                Ok(deployed) => {
                    slot.insert(deployed);
                }
                Err(reason) => {
                    servers.failed.insert(di, reason.clone());
                    return self.fail_cells(cells, &reason);
                }
            }
        }
        self.run_cells(cells, &d.cells, &servers.live[&di]).await
    }

    /// Save the server's log and remove its container, if it is running.
    pub(super) async fn stop(
        &mut self,
        d: &Deployment,
        di: usize,
        servers: &mut Servers,
    ) -> Result<()> {
        let Some(deployed) = servers.live.remove(&di) else {
            return Ok(());
        };
        let ddir = self.dir.deployment_dir(&d.slug())?;
        if let Err(e) = self.backend.stop(&deployed, &ddir).await {
            self.progress.line(format!("warning: {e:#}"));
        }
        let mut man = self.man.lock().expect("manifest lock");
        if let Some(f) = man
            .deployments
            .iter_mut()
            .find(|f| f.server == d.server && f.config == d.config)
        {
            f.finished_at = Some(manifest::now());
        }
        save_manifest(self.dir, &man)
    }

    pub(super) fn fail_cells(&mut self, cells: &[(Cell, u32)], reason: &str) -> Result<()> {
        for (cell, i) in cells {
            if let Some((duet, _)) = self.duet {
                duet.pass(cell, *i);
            }
            let kind = self.loaded.matrix.workloads[&cell.workload].kind();
            let mut row = ResultRow::for_cell(cell, kind, *i).failed(reason);
            row.docker_engine = self.engine_name.clone().unwrap_or_default();
            self.dir.append(&row)?;
            self.progress.advance(cell);
        }
        Ok(())
    }

    /// Measure `cells` (each with its iteration) on `deployed`; a sweep's cells above its
    /// stop are skipped, and the levels its stop rule asks to measure again (`all` holds the
    /// deployment's cells) are measured as soon as it asks.
    pub(super) async fn run_cells(
        &mut self,
        cells: &[(Cell, u32)],
        all: &[Cell],
        deployed: &Deployed,
    ) -> Result<()> {
        // Where the sweeps stand, read once at the start and then after each settling.
        let mut sweeps = self.settle_sweeps(all, deployed).await?;
        for (cell, i) in cells {
            let (cell, i) = (cell, *i);
            if let Some(reason) = self.lost.clone() {
                self.fail_cells(&[(cell.clone(), i)], &reason)?;
                continue;
            }
            if sweeps.skips(cell) {
                self.progress.line(format!(
                    "{cell} #{i}: not run: the sweep stopped below it (load.until)"
                ));
                self.progress.advance(cell);
                continue;
            }
            self.measure_one(cell, i, deployed).await?;
            sweeps = self.settle_sweeps(all, deployed).await?;
        }
        Ok(())
    }

    /// Measure again what the sweeps' stop rules ask for before they can tell a step, until
    /// they ask for nothing (each (cell, iteration) at most once per attempt: the rule's own
    /// bound, `max_measurements`, ends it sooner); where the sweeps then stand.
    pub(super) async fn settle_sweeps(
        &mut self,
        all: &[Cell],
        deployed: &Deployed,
    ) -> Result<sweep::Sweeps> {
        let m = &self.loaded.matrix;
        if m.load.until.is_none() {
            return Ok(sweep::Sweeps::default());
        }
        loop {
            let sweeps = read_sweeps(m, &self.dir.rows()?, Some(self.dir))?;
            if self.lost.is_some() {
                return Ok(sweeps);
            }
            let wanted: Vec<(Cell, u32)> = sweeps
                .wanted(all)
                .into_iter()
                .filter(|(c, i)| !self.is_done(c, *i))
                .map(|(c, i)| (c.clone(), i))
                .collect();
            if wanted.is_empty() {
                return Ok(sweeps);
            }
            for (cell, i) in wanted {
                self.progress.add(1);
                self.progress.line(format!(
                    "{cell} #{i}: measured again: the sweep cannot tell its step yet (load.until)"
                ));
                self.measure_one(&cell, i, deployed).await?;
            }
        }
    }

    /// Measured (or tried) already: before this attempt, or by it.
    pub(super) fn is_done(&self, c: &Cell, i: u32) -> bool {
        let key = (c.key(), i);
        self.done.contains(&key) || self.measured.contains(&key)
    }

    /// Measure one cell iteration and record its row, samples, operations and counters.
    pub(super) async fn measure_one(
        &mut self,
        cell: &Cell,
        i: u32,
        deployed: &Deployed,
    ) -> Result<()> {
        self.measured.insert((cell.key(), i));
        let label = format!("{cell} #{i}");
        if let Some((duet, _)) = self.duet {
            self.progress
                .status(format!("{label}: waiting for the other side of the duet"));
            duet.meet(cell, i).await;
        }
        let (beside, pressure) = (self.backend.other_runs().await, CpuPressure::read());
        let out = self.backend.measure(cell, i, deployed).await;
        let CellOutput {
            mut row,
            counters,
            mut samples,
            warmup_samples,
            operations,
            server_seconds,
            profile,
            counted_functions,
            loaded,
        } = out;
        if let Some(l) = loaded {
            let facts = DataFacts {
                seconds: Some(l.seconds),
                rows: Some(l.rows),
                rows_per_s: l.rows_per_s(),
                ..DataFacts::default()
            };
            self.record_data(&cell.server, &cell.config, facts)?;
        }
        row.docker_engine = self.engine_name.clone().unwrap_or_default();
        row.beside_runs = beside.max(self.backend.other_runs().await);
        row.host_cpu_pressure_pct = pressure.and_then(|p| p.percent_since());
        if !row.is_ok() && self.backend.oom_killed(deployed).await {
            row = self.oom_killed(cell, row)?;
        }
        if row.is_ok() {
            if let Some(why) = self.sat_out(cell, &row, &samples) {
                // Failed like a stall: its seconds join no chart (a resume drops them too).
                row = row.failed(&why);
                samples.clear();
            }
        }
        SampleSink::new(self.dir, cell, i).write(&samples)?;
        SampleSink::new(self.dir, cell, i)
            .warmup()
            .write(&warmup_samples)?;
        crate::results::operations::OperationSink::new(self.dir, cell, i).write(&operations)?;
        crate::results::server_seconds::ServerSecondSink::new(self.dir, cell, i)
            .write(&server_seconds)?;
        if let Some(folded) = profile.filter(|_| row.is_ok()) {
            crate::results::profiles::write(self.dir, &row, &folded)?;
        }
        if let Some(table) = counted_functions.filter(|_| row.is_ok()) {
            crate::results::functions::write(self.dir, &row, &table)?;
        }
        let pos = self.progress.position() + 1;
        let on = match &self.engine_name {
            Some(n) => format!(" [{n}]"),
            None => String::new(),
        };
        self.progress.line(match row.is_ok() {
            true => format!(
                "[{pos}/{}] {label}{on}: {:.0} qps, p95 {:.3} ms, {} errors{}",
                self.progress.length(),
                row.qps.unwrap_or(0.0),
                row.lat_p95_ms.unwrap_or(0.0),
                row.errors.unwrap_or(0),
                self.progress.eta_text()
            ),
            false => format!(
                "[{pos}/{}] {label}{on}: FAILED: {}",
                self.progress.length(),
                row.error
            ),
        });
        self.dir.record(&row, &counters)?;
        self.progress.advance(cell);
        if !row.is_ok() && self.lost.is_none() && !self.backend.alive().await {
            self.mark_lost("stopped answering".into())?;
        }
        Ok(())
    }

    /// Why an ok-looking measurement is not one: the server sat part of it out
    /// (`measure::pause`).
    fn sat_out(&self, cell: &Cell, row: &ResultRow, samples: &[Sample]) -> Option<String> {
        let m = &self.loaded.matrix;
        let timed = match m.length {
            Some(Length::Time(d)) if m.workloads[&cell.workload].runs_for_length() => Some(d),
            _ => None,
        };
        crate::measure::pause::sat_out(timed, row.seconds.unwrap_or(0.0), samples)
    }

    /// A failed row of a server the kernel killed for lack of memory says so first, and the
    /// deployment's manifest entry records it.
    fn oom_killed(&self, cell: &Cell, row: ResultRow) -> Result<ResultRow> {
        let spec = &self.loaded.matrix.servers[&cell.server];
        let limit = match &spec.memory {
            Some(m) => format!("its memory limit is {}", crate::escape::terminal(m)),
            None => "it had no memory limit: the host ran out".to_string(),
        };
        let error = row.error.clone();
        let row = row.failed(&format!(
            "the server was killed for lack of memory (OOMKilled; {limit}): {error}"
        ));
        let mut man = self.man.lock().expect("manifest lock");
        if let Some(f) = man
            .deployments
            .iter_mut()
            .rev()
            .find(|f| f.server == cell.server && f.config == cell.config)
        {
            f.oom_killed = true;
        }
        save_manifest(self.dir, &man)?;
        Ok(row)
    }
}
