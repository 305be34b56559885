//! Checks of the expanded plan: some cell is left to run, and no cell would reconfigure an
//! external server.

use super::MatrixError;
use super::Validator;
use crate::escape::terminal;
use crate::matrix::plan::Plan;

impl Validator<'_> {
    /// `exclude`/`include` that leave nothing would make a run that measures nothing.
    pub(super) fn check_some_cell(&self, plan: &Plan) -> Result<(), MatrixError> {
        if plan.cell_count() > 0 {
            return Ok(());
        }
        let at = if self.m.include.is_empty() {
            "exclude"
        } else {
            "include"
        };
        Err(self.err(
            at,
            "`exclude`/`include` leave no cell to run: the matrix would measure nothing".into(),
        ))
    }

    /// An external server is never reconfigured: each of its cells must use an empty config.
    pub(super) fn check_external(&self, plan: &Plan) -> Result<(), MatrixError> {
        for d in &plan.deployments {
            let changes = self.m.configs[&d.config].changes_server();
            if self.m.servers[&d.server].external.is_some() && changes {
                return Err(self.err_at(
                    self.spans.key(&format!("configs.{}", d.config)),
                    format!(
                        "config `{}` would change the external server `{}`, which rmatrix never \
                         reconfigures: add `{{server: {}, config: {}}}` to `exclude`",
                        d.config, d.server, d.server, d.config
                    ),
                ));
            }
            let Some(ext) = &self.m.servers[&d.server].external else {
                continue;
            };
            let resets = (d.cells.iter()).find_map(|c| {
                let w = &self.m.workloads[&c.workload];
                w.resets().map(|what| (&c.workload, what))
            });
            if let (false, Some((workload, what))) = (ext.may_reset, resets) {
                return Err(self.err_at(
                    self.spans.key(&format!("servers.{}.external", d.server)),
                    format!(
                        "workload `{}` {what} before each iteration, and `{}` is an external \
                         server: say `may_reset: true` in its `external:` block if nothing on \
                         it is needed, or exclude the workload there",
                        terminal(workload),
                        terminal(&d.server)
                    ),
                ));
            }
        }
        Ok(())
    }
}
