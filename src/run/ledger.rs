//! The manifest as the run goes: saved after every change (a deployment started or stopped,
//! an engine lost), shared by the pool's workers behind one lock.

use anyhow::Result;

use super::*;

pub(super) fn save_manifest(dir: &RunDir, man: &Manifest) -> Result<()> {
    dir.write_json(MANIFEST, &serde_json::to_value(man)?)
}

impl<B: backend::Backend> RunCtx<'_, B> {
    /// Add or update the manifest entry of a deployment (one per server x config; `starts`
    /// counts restarts).
    pub(super) fn record_deployment(&mut self, facts: DeploymentFacts) -> Result<()> {
        let mut man = self.man.lock().expect("manifest lock");
        let starts = man
            .deployments
            .iter()
            .find(|f| f.server == facts.server && f.config == facts.config)
            .map(|f| f.starts)
            .unwrap_or(0);
        man.deployments
            .retain(|f| !(f.server == facts.server && f.config == facts.config));
        man.deployments.push(DeploymentFacts {
            starts: starts + 1,
            ..facts
        });
        save_manifest(self.dir, &man)
    }

    /// Add how a start of `server` x `config` got its tables (the start is its manifest
    /// entry's latest), and say it.
    pub(super) fn record_data(
        &mut self,
        server: &str,
        config: &str,
        facts: DataFacts,
    ) -> Result<()> {
        self.progress
            .line(format!("{server}/{config}: {}", data_line(&facts)));
        let mut man = self.man.lock().expect("manifest lock");
        let start = man
            .deployments
            .iter()
            .find(|f| f.server == server && f.config == config)
            .map(|f| f.starts)
            .unwrap_or(0);
        man.data.push(DataFacts {
            server: server.to_string(),
            config: config.to_string(),
            start,
            ..facts
        });
        save_manifest(self.dir, &man)
    }

    /// This worker's engine left the pool: say so, and record it in the manifest.
    pub(super) fn mark_lost(&mut self, why: String) -> Result<()> {
        let name = self.engine_name.clone().unwrap_or_else(|| "local".into());
        let reason = format!("engine {name} {why}");
        self.progress.line(match self.engine_name.is_some() {
            true => format!("{reason}: its remaining deployments go to the other engines"),
            false => {
                format!("{reason}: the cells left are not measured (--resume once it is back)")
            }
        });
        let mut man = self.man.lock().expect("manifest lock");
        if let Some(f) = man.engines.iter_mut().find(|f| f.name == name) {
            f.lost = Some(reason.clone());
        }
        save_manifest(self.dir, &man)?;
        self.lost = Some(reason);
        Ok(())
    }
}

/// One line of what a start did about its tables.
fn data_line(f: &DataFacts) -> String {
    let rows = match (f.rows, f.seconds, f.rows_per_s) {
        (Some(r), Some(s), Some(ps)) => format!("{r} rows in {s:.1} s ({ps:.0} rows/s)"),
        (Some(r), Some(s), None) => format!("{r} rows in {s:.1} s"),
        _ => String::new(),
    };
    let set = f.dataset.as_deref().unwrap_or("");
    match (f.how, &f.note) {
        (_, Some(note)) => format!("no data set: {note}"),
        (DataHow::Prepared, None) => format!("prepared {rows}"),
        (DataHow::Kept, None) => format!("data set {set} prepared: {rows}, kept"),
        (DataHow::Restored, None) => format!(
            "data set {set} restored: {:.1} MB copied in {:.1} s; {} in {:.1} s",
            f.bytes.unwrap_or(0) as f64 / 1e6,
            f.seconds.unwrap_or(0.0),
            f.verified.as_deref().unwrap_or("not checked"),
            f.verify_s.unwrap_or(0.0)
        ),
    }
}
