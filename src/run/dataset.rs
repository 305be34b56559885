//! Kept data sets in a run (`datasets: {reuse: true}`, `servers::dataset`): the set a
//! deployment's server starts on, made on a server of its own the first time (its cells'
//! tables prepared, sealed, the server stopped cleanly), then copied into a fresh volume
//! for each server and checked before it is measured. Anything that goes wrong falls back to
//! today's way: the server starts empty and its first iteration prepares the tables.

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::*;
use crate::matrix::model::DataSetsSpec;
use crate::results::manifest::{DataFacts, DataHow};
use crate::servers::dataset::{self, DataSet, Seal, Verify};
use crate::servers::family::Family;

/// A server started on a copy of a kept set.
pub(super) struct OnCopy {
    pub(super) deployed: Deployed,
    /// The set's own prepare, when this start made it; then the copy.
    pub(super) data: Vec<DataFacts>,
}

impl DockerBackend<'_> {
    /// Start `d`'s server on a copy of its kept set, making the set first when the engine
    /// has none. None: the matrix keeps no sets, or `d` can have none (said in `data`'s
    /// note of the returned facts when it asked for one).
    pub(super) async fn start_on_copy(
        &mut self,
        d: &Deployment,
        name: &str,
        image: &str,
        ddir: &Path,
    ) -> Result<OnCopy, DataFacts> {
        let m = &self.loaded.matrix;
        let Some(spec) = m.datasets.filter(|s| s.reuse) else {
            return Err(DataFacts::default());
        };
        let family = m.servers[&d.server].kind().family();
        let why_not = |note: String| DataFacts {
            note: Some(note),
            ..DataFacts::default()
        };
        if family.datadir().is_none() {
            return Err(why_not("its server family keeps no data sets".into()));
        }
        if !matches!(self.client, Client::Process) {
            return Err(why_not(
                "data sets are kept only where this process reaches the server (not with \
                 client containers)"
                    .into(),
            ));
        }
        let layouts = d.layouts(m).map_err(why_not)?;
        let engine = self.engine.clone().expect("invariant: docker connected");
        let image_id = engine.image_id(image).await.unwrap_or_else(|| image.into());
        let config = &m.configs[&d.config];
        let set = DataSet::of(family, &image_id, &layouts, config);
        let mut data = Vec::new();
        let password = match dataset::find(&engine, &set).await {
            Ok(Some(p)) => p,
            Ok(None) => {
                let made = self.make_set(d, &set, name, image, ddir).await;
                match made {
                    Ok(facts) => data.push(facts),
                    Err(e) => return Err(why_not(format!("making data set {}: {e:#}", set.key))),
                }
                self.password.clone()
            }
            Err(e) => return Err(why_not(format!("{e:#}"))),
        };
        let schemas: Vec<String> = layouts.iter().map(|l| l.db.clone()).collect();
        match self
            .restore(d, &set, spec, (name, image, &password), &schemas, ddir)
            .await
        {
            Ok((deployed, facts)) => {
                data.push(facts);
                Ok(OnCopy { deployed, data })
            }
            Err(e) => {
                // A set whose copy does not check out is not used again.
                let _ = engine.remove_volume(&set.volume()).await;
                Err(why_not(format!(
                    "restoring data set {} failed, so it was removed: {e:#}",
                    set.key
                )))
            }
        }
    }

    /// Prepare the tables of `d`'s cells on a server of their own started on the set's new
    /// volume, seal them, and stop it cleanly: the volume is then the kept set.
    async fn make_set(
        &mut self,
        d: &Deployment,
        set: &DataSet,
        name: &str,
        image: &str,
        ddir: &Path,
    ) -> Result<DataFacts> {
        let engine = self.engine.clone().expect("invariant: docker connected");
        dataset::create(&engine, set, &self.password).await?;
        let made = self.prepare_set(d, set, name, image, ddir).await;
        if made.is_err() {
            let _ = engine.remove_volume(&set.volume()).await;
        }
        made
    }

    async fn prepare_set(
        &mut self,
        d: &Deployment,
        set: &DataSet,
        name: &str,
        image: &str,
        ddir: &Path,
    ) -> Result<DataFacts> {
        let m = &self.loaded.matrix;
        let engine = self.engine.clone().expect("invariant: docker connected");
        let dir = ddir.join("dataset");
        std::fs::create_dir_all(&dir)?;
        self.progress.status(format!(
            "{}/{}: starting a server to prepare data set {}",
            d.server, d.config, set.key
        ));
        let password = self.password.clone();
        let launch = self.launch(d, &password, Some(set.volume()));
        let family = m.servers[&d.server].kind().family();
        let config = &m.configs[&d.config];
        let builder = format!("{name}-dataset");
        let server =
            servers::family::start(&engine, family, &launch, &builder, image, config, &dir).await?;
        let id = server
            .container
            .clone()
            .expect("invariant: a started container");
        let prepared = self.prepare_tables(d, set, family, &server).await;
        let stopped = engine.stop(&id, dataset::SHUTDOWN_GRACE).await;
        let code = engine.wait(&id).await;
        std::fs::write(dir.join("server.log"), engine.logs(&id).await)?;
        engine.remove(&id).await?;
        let seal = prepared?;
        stopped?;
        match code? {
            0 => {}
            c => bail!("its server exited with code {c} on shutdown (see dataset/server.log)"),
        }
        let loaded = crate::measure::measurement::Loaded {
            rows: seal.rows,
            seconds: seal.prepare_s,
        };
        Ok(DataFacts {
            how: DataHow::Kept,
            dataset: Some(set.key.clone()),
            seconds: Some(seal.prepare_s),
            rows: Some(seal.rows),
            rows_per_s: loaded.rows_per_s(),
            ..DataFacts::default()
        })
    }

    /// Load each cell's tables (each schema once), then seal the server.
    async fn prepare_tables(
        &self,
        d: &Deployment,
        set: &DataSet,
        family: &dyn Family,
        server: &Deployed,
    ) -> Result<Seal> {
        let m = &self.loaded.matrix;
        let live = AtomicU64::new(0);
        let started = Instant::now();
        let mut done: Vec<String> = Vec::new();
        let mut rows = 0;
        for c in &d.cells {
            let workload = &m.workloads[&c.workload];
            let Some(l) = workload.data_layout(c.engine.as_deref()) else {
                continue;
            };
            if done.contains(&l.db) {
                continue;
            }
            let expect = l.rows as f64 / crate::matrix::plan::ASSUMED_PREPARE_ROWS_PER_S;
            self.progress.status(format!(
                "{}/{}: preparing data set {}: {} ({} rows, ~{expect:.0} s expected)",
                d.server, d.config, set.key, l.db, l.rows
            ));
            workload
                .prepare(
                    m.servers[&d.server].kind(),
                    &server.endpoint,
                    c.engine.as_deref(),
                    &live,
                )
                .await?;
            rows += l.rows;
            done.push(l.db);
        }
        let prepare_s = started.elapsed().as_secs_f64();
        let tables = family.checksums(&server.endpoint, &done).await?;
        let seal = Seal {
            key: set.key.clone(),
            rows,
            prepare_s,
            tables,
        };
        family
            .write_seal(&server.endpoint, &seal)
            .await
            .context("failed to seal the data set")?;
        Ok(seal)
    }

    /// Copy the set into a volume of `d`'s own, start `d`'s server on it, and check the
    /// copy against its seal.
    async fn restore(
        &mut self,
        d: &Deployment,
        set: &DataSet,
        spec: DataSetsSpec,
        (name, image, password): (&str, &str, &str),
        schemas: &[String],
        ddir: &Path,
    ) -> Result<(Deployed, DataFacts)> {
        let m = &self.loaded.matrix;
        let engine = self.engine.clone().expect("invariant: docker connected");
        let volume = format!("{name}-data");
        self.progress.status(format!(
            "{}/{}: copying data set {}",
            d.server, d.config, set.key
        ));
        let copied = dataset::copy(&engine, set, image, &volume, (self.run_id, self.instance));
        let copied = match copied.await {
            Ok(c) => c,
            Err(e) => {
                let _ = engine.remove_volume(&volume).await;
                return Err(e);
            }
        };
        let launch = self.launch(d, password, Some(volume.clone()));
        let family = m.servers[&d.server].kind().family();
        let server_spec = &m.servers[&d.server];
        let config = &m.configs[&d.config];
        let started =
            servers::provision(server_spec, &engine, &launch, name, image, config, ddir).await;
        let mut deployed = match started {
            Ok(s) => s,
            Err(e) => {
                let _ = engine.remove_volume(&volume).await;
                return Err(e);
            }
        };
        deployed.data_volume = Some(volume);
        let checking = Instant::now();
        let checked = async {
            let sealed = family.read_seal(&deployed.endpoint).await?;
            let now = match spec.verify {
                Verify::Checksum => Some(family.checksums(&deployed.endpoint, schemas).await?),
                Verify::Seal => None,
            };
            dataset::check(set, sealed, now.as_ref())
        };
        match checked.await {
            Ok((seal, verified)) => Ok((
                deployed,
                DataFacts {
                    how: DataHow::Restored,
                    dataset: Some(set.key.clone()),
                    seconds: Some(copied.seconds),
                    rows: Some(seal.rows),
                    bytes: Some(copied.bytes),
                    verified: Some(verified),
                    verify_s: Some(checking.elapsed().as_secs_f64()),
                    ..DataFacts::default()
                },
            )),
            Err(e) => {
                let _ = servers::teardown(Some(&engine), &deployed, ddir).await;
                Err(e)
            }
        }
    }
}
