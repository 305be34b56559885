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

    /// Each row with its counter deltas as one JSON text in `server_counters`, as format 1
    /// stored them (from counters.csv in format 2; a counter at 0 is not there).
    fn run(&self, run: &RunView) -> Result<String> {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            #[serde(flatten)]
            row: &'a crate::model::ResultRow,
            server_counters: String,
        }
        let rows = run.dir.rows()?;
        let counters = crate::results::counters::of_rows(run.dir, &rows)?;
        let out: Vec<Row> = rows
            .iter()
            .zip(counters)
            .map(|(row, c)| Row {
                row,
                server_counters: match c.is_empty() {
                    true => String::new(),
                    false => serde_json::to_string(&c).unwrap_or_default(),
                },
            })
            .collect();
        text(&out)
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
