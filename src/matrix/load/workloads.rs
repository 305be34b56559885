//! Each workload kind's own checks (`Driver::check`), then which workloads may meet which
//! servers (`families`).

use super::MatrixError;
use super::Validator;

impl Validator<'_> {
    /// Each kind's own checks (`Driver::check`), at their place in the file.
    pub(super) fn check_workloads(&self) -> Result<(), MatrixError> {
        let facts = crate::workloads::Facts {
            length: self.m.length,
            pace: (self.m.load.rate.as_ref())
                .and_then(|r| r.first())
                .map(|&r| self.m.load.pace(r, 0)),
        };
        for (name, w) in &self.m.workloads {
            if let Err(p) = w.check(&facts) {
                let path = match p.at.as_str() {
                    "" => format!("workloads.{name}.{}", w.kind()),
                    at => format!("workloads.{name}.{}.{at}", w.kind()),
                };
                let pos = match p.on_key {
                    true => self.spans.key(&path),
                    false => self.spans.find(&path),
                };
                return Err(self.err_at(pos, p.message));
            }
        }
        self.check_kinds()?;
        self.check_refusals()
    }
}
