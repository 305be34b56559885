//! Each workload kind's own checks (`Driver::check`), then which workloads may meet which
//! servers (`families`).

use std::collections::{HashMap, HashSet};

use super::MatrixError;
use super::Validator;
use crate::matrix::plan::Plan;

impl Validator<'_> {
    /// Each kind's own checks (`Driver::check`), at their place in the file.
    pub(super) fn check_workloads(&self, plan: &Plan) -> Result<(), MatrixError> {
        let m = self.m;
        // Each workload's concurrency levels, in the matrix's order, once each.
        let mut seen: HashSet<(&str, u32)> = HashSet::new();
        let mut levels: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut external: HashMap<&str, Vec<String>> = HashMap::new();
        for c in plan.cells() {
            let on = external.entry(c.workload.as_str()).or_default();
            if m.servers[&c.server].external.is_some() && !on.contains(&c.server) {
                on.push(c.server.clone());
            }
            if seen.insert((c.workload.as_str(), c.concurrency)) {
                levels
                    .entry(c.workload.as_str())
                    .or_default()
                    .push(c.concurrency);
            }
        }
        for (name, w) in &m.workloads {
            let facts = crate::workloads::Facts {
                length: m.length,
                pace: (m.load.rate.as_ref())
                    .and_then(|r| r.first())
                    .map(|&r| m.load.pace(r, 0)),
                concurrency: levels.remove(name.as_str()).unwrap_or_default(),
                warmup: m.warmup,
                until: m.load.until.is_some(),
                external: external.remove(name.as_str()).unwrap_or_default(),
                bridge: m.network == crate::matrix::model::Network::Bridge,
            };
            if let Err(p) = w.check(&facts) {
                let path = match p.at.as_str() {
                    _ if p.in_matrix => p.at.clone(),
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
        self.check_kinds(plan)?;
        self.check_refusals(plan)
    }
}
