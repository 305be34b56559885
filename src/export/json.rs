//! JSON for scripts: a run's rows, a comparison (with its `format_version`), a history.

use anyhow::Result;

use super::{Exporter, RunView};
use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::join::Comparison;

pub(crate) struct Json;

impl Exporter for Json {
    fn needs_matrix(&self) -> bool {
        // The stored rows as they are.
        false
    }

    fn run(&self, run: &RunView) -> Result<String> {
        Ok(serde_json::to_string_pretty(&run.dir.rows()?)? + "\n")
    }

    fn compare(&self, _: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        Ok(serde_json::to_string_pretty(comparisons)? + "\n")
    }

    fn history(&self, _: &[EnvDiff], history: &History) -> Result<String> {
        Ok(serde_json::to_string_pretty(history)? + "\n")
    }
}
