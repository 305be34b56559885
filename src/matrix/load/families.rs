//! Which workloads can run against which servers: a pair of different families is an
//! error at the workload, unless an exclude rule removes it; and a config a server's family
//! refuses (`Family::refuses`) is an error at the config, unless an exclude rule removes it.

use super::Validator;
use crate::matrix::plan::Plan;
use crate::matrix::MatrixError;
use crate::servers::config::{Allocator, ConfigSpec};

impl Validator<'_> {
    /// A workload against a server of another family is a mistake unless an exclude rule
    /// removes the pair.
    pub(super) fn check_kinds(&self, plan: &Plan) -> Result<(), MatrixError> {
        let m = self.m;
        for d in &plan.deployments {
            let kind = m.servers[&d.server].kind();
            for c in &d.cells {
                let w = &m.workloads[&c.workload];
                let wants = w.families();
                if !wants.contains(&kind) {
                    let why = w
                        .refuses(kind)
                        .map(|why| format!(" ({why})"))
                        .unwrap_or_default();
                    return Err(self.err_at(
                        self.spans.key(&format!("workloads.{}", c.workload)),
                        format!(
                            "workload `{}` ({}) cannot run against server `{}` ({}){why}: \
                             add `{{server: {}, workload: {}}}` to `exclude`, or set the \
                             server's `kind` when it is not inferred from its image name",
                            c.workload,
                            w.kind(),
                            d.server,
                            kind.name(),
                            d.server,
                            c.workload
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A config the server's family refuses on that server (e.g. a thread pool where the
    /// server has none) is a mistake unless an exclude rule removes the pair.
    pub(super) fn check_refusals(&self, plan: &Plan) -> Result<(), MatrixError> {
        let m = self.m;
        for d in &plan.deployments {
            let server = &m.servers[&d.server];
            let config = &m.configs[&d.config];
            let family = server.kind().family();
            if let Some(r) = family.refuses(&d.server, server, &d.config, config) {
                return Err(self.err(&format!("configs.{}.{}", d.config, r.at), r.message));
            }
            let own = family.config_block().key;
            if let Some(foreign) = foreign_only(config, own) {
                return Err(self.err(
                    &format!("configs.{}.{foreign}", d.config),
                    format!(
                        "config `{}` sets only `{foreign}`, which server `{}` ({}) does not \
                         read: it would run unchanged and be reported as a variant of its \
                         own; give the config a `{own}` block, or add `{{server: {}, config: \
                         {}}}` to `exclude`",
                        d.config,
                        d.server,
                        server.kind().name(),
                        d.server,
                        d.config
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The first block of another family's settings when it is all `config` would change on a
/// server whose own block is `own`: such a variant is the default server under another name.
fn foreign_only(config: &ConfigSpec, own: &str) -> Option<&'static str> {
    let mine = !config.settings(own).is_empty()
        || !config.env.is_empty()
        || !config.args.is_empty()
        || config.allocator.is_some_and(|a| a != Allocator::System);
    if mine {
        return None;
    }
    config
        .blocks
        .iter()
        .find(|(key, settings)| **key != own && !settings.is_empty())
        .map(|(key, _)| *key)
}
