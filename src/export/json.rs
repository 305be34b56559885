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
        text(&run.dir.rows()?)
    }

    fn compare(&self, _: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        text(comparisons)
    }

    fn history(&self, _: &[EnvDiff], history: &History) -> Result<String> {
        text(history)
    }
}

/// Pretty JSON whose strings carry no character a terminal acts on (see `escape::json`).
fn text<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    Ok(crate::escape::json(&serde_json::to_string_pretty(value)?) + "\n")
}
