//! Starting a deployment as the run records it: its facts in the manifest, what the server
//! reports (variables.json, verified.json), and the variant judged: a server whose variant
//! did not take effect is stopped, and its cells fail with the mismatch.

use std::time::Instant;

use anyhow::Result;

use super::backend::Backend;
use super::*;

impl<B: Backend> RunCtx<'_, B> {
    /// Start the server of `d`; the inner error is the reason its cells fail.
    pub(super) async fn start(&mut self, d: &Deployment) -> Result<Result<Deployed, String>> {
        let ddir = self.dir.deployment_dir(&d.slug())?;
        let spec = &self.loaded.matrix.servers[&d.server];
        let mut facts = DeploymentFacts {
            server: d.server.clone(),
            config: d.config.clone(),
            engine: self.engine_name.clone(),
            cpuset: self.backend.placed().or_else(|| spec.cpuset.clone()),
            cpus: spec.cpus,
            memory_bytes: spec.memory_bytes(),
            started_at: manifest::now(),
            ..DeploymentFacts::default()
        };
        self.progress
            .status(format!("{}/{}: starting server", d.server, d.config));
        let started = Instant::now();
        let up = self.backend.start(d, &ddir).await;
        facts.container = up.container;
        let deployed = match up.server {
            Ok(dep) => dep,
            Err(why) => {
                let reason = format!("server failed to start: {why}");
                return self.not_started(facts, d, DeploymentStatus::Failed, reason);
            }
        };
        facts.version = Some(deployed.version.clone());
        self.progress.line(format!(
            "{}/{}: {} ready in {:.1}s",
            d.server,
            d.config,
            deployed.version,
            started.elapsed().as_secs_f64()
        ));
        std::fs::write(
            ddir.join("variables.json"),
            serde_json::to_string_pretty(&deployed.variables)? + "\n",
        )?;
        std::fs::write(
            ddir.join("verified.json"),
            serde_json::to_string_pretty(&deployed.checks)? + "\n",
        )?;
        if let Some(reason) = deployed.mismatch() {
            if let Err(e) = self.backend.stop(&deployed, &ddir).await {
                self.progress.line(format!("warning: {e:#}"));
            }
            facts.finished_at = Some(manifest::now());
            return self.not_started(facts, d, DeploymentStatus::ConfigMismatch, reason);
        }
        facts.status = DeploymentStatus::Ok;
        self.record_deployment(facts)?;
        for f in up.data {
            self.record_data(&d.server, &d.config, f)?;
        }
        Ok(Ok(deployed))
    }

    /// A deployment that does not run (its server failed to start, or its variant did not
    /// take effect): say why and record it; the reason is what its cells fail with.
    fn not_started(
        &mut self,
        mut facts: DeploymentFacts,
        d: &Deployment,
        status: DeploymentStatus,
        reason: String,
    ) -> Result<Result<Deployed, String>> {
        self.progress
            .line(format!("{}/{}: {reason}", d.server, d.config));
        facts.status = status;
        facts.error = Some(reason.clone());
        self.record_deployment(facts)?;
        Ok(Err(reason))
    }
}
