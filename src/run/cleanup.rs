//! Every way out of a run removes the containers it started: a guard for `?` and panics,
//! and removal passes after the work ends (or is interrupted), on every engine.

use anyhow::Result;
use tokio::signal::unix::{Signal, SignalKind};

use super::*;

/// Ctrl-C (SIGINT) and SIGTERM (a CI job's timeout, `kill`), listened for from a run's first
/// step: once these handlers are set a signal no longer kills the process wherever it is (a
/// resume's removal of leftovers included); the run notices it and stops cleanly.
pub(super) struct Stop {
    signals: Option<(Signal, Signal)>,
}

impl Stop {
    pub(super) fn listen() -> Stop {
        let kind = |k| tokio::signal::unix::signal(k).ok();
        Stop {
            signals: kind(SignalKind::interrupt()).zip(kind(SignalKind::terminate())),
        }
    }

    /// Resolves at the next signal (never, if the handlers could not be set).
    pub(super) async fn wait(&mut self) {
        match &mut self.signals {
            Some((int, term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            None => std::future::pending().await,
        }
    }
}

/// Removes the run's containers (by label) when dropped while armed. Drop cannot await, and
/// the run's own runtime may be the one unwinding, so it connects afresh on its own thread.
pub(super) struct ContainerGuard {
    pub(super) addrs: Vec<EngineAddr>,
    pub(super) run_id: String,
    pub(super) instance: String,
    pub(super) armed: bool,
}

impl ContainerGuard {
    pub(super) fn new(
        addrs: Vec<EngineAddr>,
        armed: bool,
        run_id: &str,
        instance: &str,
    ) -> ContainerGuard {
        ContainerGuard {
            addrs,
            run_id: run_id.to_string(),
            instance: instance.to_string(),
            armed,
        }
    }

    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (run_id, instance) = (self.run_id.clone(), self.instance.clone());
        let addrs = self.addrs.clone();
        let removed = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut all = Some(0);
                for a in &addrs {
                    let one = match Engine::connect_to(a).await {
                        Ok(engine) => engine.remove_run(&run_id, &instance).await.ok(),
                        Err(_) => None,
                    };
                    all = all.zip(one).map(|(x, y)| x + y);
                }
                all
            })
        })
        .join();
        if !matches!(removed, Ok(Some(_))) {
            eprintln!(
                "warning: could not remove the containers of run {}; `rmatrix clean` removes them",
                self.run_id
            );
        }
    }
}

/// An engine as the removal passes see it.
pub(super) trait RunContainers {
    fn name(&self) -> &str;
    /// Remove every container of the run (by label); how many there were.
    async fn remove_run(&self, run_id: &str, instance: &str) -> Result<usize>;
}

impl RunContainers for Engine {
    fn name(&self) -> &str {
        Engine::name(self)
    }

    async fn remove_run(&self, run_id: &str, instance: &str) -> Result<usize> {
        Engine::remove_run(self, run_id, instance).await
    }
}

/// Remove the run's containers on every engine; whether every engine answered. After an
/// interrupt, a create request the dropped work had already sent can land after a pass has
/// listed the containers: passes then repeat, a second apart, until one finds none anywhere
/// (at most five).
pub(super) async fn remove_passes(
    pool: &[impl RunContainers],
    run_id: &str,
    instance: &str,
    interrupted: bool,
) -> bool {
    let mut all_removed = true;
    for pass in 0..5 {
        if pass > 0 {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        let mut found = 0;
        for e in pool {
            match e.remove_run(run_id, instance).await {
                Ok(n) => found += n,
                Err(err) => {
                    all_removed = false;
                    eprintln!(
                        "warning: failed to remove this run's containers on engine {}: {err:#}",
                        e.name()
                    );
                }
            }
        }
        if !interrupted || !all_removed || (pass > 0 && found == 0) {
            break;
        }
    }
    all_removed
}

/// A killed earlier attempt may have left its servers up, under the names a resumed one is
/// about to use: they go first.
pub(super) async fn remove_leftovers(pool: &[Engine], run_id: &str, instance: &str) -> Result<()> {
    for e in pool {
        let n = e
            .remove_run(run_id, instance)
            .await
            .context("failed to remove the containers an earlier attempt left")?;
        if n > 0 {
            eprintln!(
                "removed {n} container(s) an earlier attempt of run {run_id} left on engine {}",
                e.name()
            );
        }
    }
    Ok(())
}
