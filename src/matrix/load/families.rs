//! Which workloads can run against which servers: a pair of different families is an
//! error at the workload, unless an exclude rule removes it.

use super::Validator;
use crate::matrix::MatrixError;
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
}
