//! Which workloads can run against which servers: a pair of different families is an
//! error at the workload, unless an exclude rule removes it. Within the MySQL family, a
//! config that needs a thread pool cannot run on a server that has none.

use super::Validator;
use crate::matrix::MatrixError;
use crate::servers::mysql::flavor::Flavor;
use crate::servers::spec::ServerKind;

impl Validator<'_> {
    /// A Redis workload against a MySQL server (or the other way round) is a mistake unless
    /// an exclude rule removes the pair.
    pub(super) fn check_kinds(&self) -> Result<(), MatrixError> {
        let m = self.m;
        for d in &crate::matrix::expand(m, &[]).deployments {
            let kind = m.servers[&d.server].kind();
            for c in &d.cells {
                let w = &m.workloads[&c.workload];
                let wants = w.family();
                if wants != kind {
                    let server_kind = match kind {
                        ServerKind::Mysql => "mysql",
                        ServerKind::Redis => "redis",
                    };
                    return Err(self.err_at(
                        self.spans.key(&format!("workloads.{}", c.workload)),
                        format!(
                            "workload `{}` ({}) cannot run against server `{}` ({server_kind}): \
                             add `{{server: {}, workload: {}}}` to `exclude`, or set the \
                             server's `kind` when it is not inferred from its image name",
                            c.workload,
                            w.kind(),
                            d.server,
                            d.server,
                            c.workload
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `thread_handling: pool-of-threads` on a server whose image or build names Oracle MySQL
    /// (which has no thread pool: its server would refuse to start) is a mistake unless an
    /// exclude rule removes the pair.
    pub(super) fn check_thread_pool(&self) -> Result<(), MatrixError> {
        let m = self.m;
        for d in &crate::matrix::expand(m, &[]).deployments {
            let Some(flavor) = Flavor::of_spec(&m.servers[&d.server]) else {
                continue;
            };
            if flavor.has_thread_pool() {
                continue;
            }
            let pooled = m.configs[&d.config].mycnf.iter().find(|(k, v)| {
                let k = k.trim().to_lowercase().replace('-', "_");
                k.strip_prefix("loose_").unwrap_or(&k) == "thread_handling"
                    && v.as_ref().is_some_and(|v| {
                        v.0.trim().to_lowercase().replace('_', "-") == "pool-of-threads"
                    })
            });
            if let Some((key, _)) = pooled {
                return Err(self.err(
                    &format!("configs.{}.mycnf.{key}", d.config),
                    format!(
                        "config `{}` sets `thread_handling: pool-of-threads`, but server `{}` is \
                         {} (from its {}), which has no thread pool: MariaDB and Percona Server \
                         have one; use one of them, or add `{{server: {}, config: {}}}` to \
                         `exclude`",
                        d.config,
                        d.server,
                        flavor.name(),
                        match m.servers[&d.server].image {
                            Some(_) => "image",
                            None => "build name",
                        },
                        d.server,
                        d.config
                    ),
                ));
            }
        }
        Ok(())
    }
}
