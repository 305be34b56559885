//! Checks of the expanded plan: some cell is left to run, and no cell would reconfigure an
//! external server.

use super::MatrixError;
use super::Validator;
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
        }
        Ok(())
    }
}
