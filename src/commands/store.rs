//! `rmatrix store import|list`: keep runs in a results store, and list them.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::plan::PlanFormat;
use super::stdio::emit;
use crate::error::{Outcome, UsageError};
use crate::store::{Location, Store};

/// `rmatrix store`'s options: its action.
#[derive(Debug, clap::Args)]
pub(crate) struct StoreArgs {
    #[command(subcommand)]
    pub(crate) action: StoreAction,
}

/// `rmatrix store`'s actions.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum StoreAction {
    /// Store run directories (each, or every run in a folder such as reports/runs). A run
    /// stored before is left as it is, or replaced when its content changed (a resumed run).
    Import {
        /// The store: a SQLite file or a postgres:// URL.
        #[arg(long, value_name = "STORE")]
        store: String,
        /// Run directories, or folders of them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// List the stored runs: id, matrix, start, iterations (ok / all), where each came from.
    List {
        /// The store: a SQLite file or a postgres:// URL.
        #[arg(long, value_name = "STORE")]
        store: String,
        /// Only the runs of the matrix called NAME.
        #[arg(long, value_name = "NAME")]
        matrix: Option<String>,
        /// `text`, or `json` for scripts.
        #[arg(long, value_enum, default_value = "text")]
        format: PlanFormat,
    },
}

/// `rmatrix store import|list`.
pub(super) fn store(a: &StoreArgs) -> Result<Outcome> {
    match &a.action {
        StoreAction::Import { store, dirs } => import(store, dirs),
        StoreAction::List {
            store,
            matrix,
            format,
        } => list(store, matrix.as_deref(), *format),
    }
}

/// Store every run in `dirs`; each is stored or refused on its own.
fn import(store: &str, dirs: &[PathBuf]) -> Result<Outcome> {
    let mut s = Store::open(&Location::parse(store))?;
    let mut dirs_found = Vec::new();
    for d in dirs {
        dirs_found.extend(crate::compare::input::run_dirs(d)?);
    }
    if dirs_found.is_empty() {
        return Err(UsageError(format!(
            "no run directory in {}",
            crate::escape::terminal(
                &dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ))
        .into());
    }
    // Each run is stored or refused on its own: one bad run keeps no other out.
    let mut refused = 0;
    for d in dirs_found {
        match s.import(&d) {
            Ok(how) => eprintln!("{}", stored_line(how, &d, s.label())),
            Err(e) => {
                refused += 1;
                eprintln!("refused: {}", crate::error_text(&e));
            }
        }
    }
    match refused {
        0 => Ok(Outcome::Done),
        n => Err(UsageError(format!("{n} run(s) refused (above); the others are stored")).into()),
    }
}

/// The stored runs (of `matrix`) on stdout.
fn list(store: &str, matrix: Option<&str>, format: PlanFormat) -> Result<Outcome> {
    let mut s = Store::read(&Location::parse(store))?;
    let runs = s.list(matrix)?;
    let text = match format {
        PlanFormat::Json => serde_json::to_string_pretty(&runs)? + "\n",
        PlanFormat::Text => {
            let t = crate::escape::terminal;
            let mut out = String::new();
            for r in &runs {
                out.push_str(&format!(
                    "{}  {}  {}  {}/{} ok  {}\n",
                    t(&r.started_at),
                    t(&r.matrix),
                    t(&r.run_id),
                    r.ok,
                    r.iterations,
                    t(&r.source)
                ));
            }
            out.push_str(&format!("{} run(s) in {}\n", runs.len(), t(s.label())));
            out
        }
    };
    emit(&text)?;
    Ok(Outcome::Done)
}

/// What storing a run did, for stderr.
pub(super) fn stored_line(how: crate::store::Imported, dir: &Path, store: &str) -> String {
    use crate::store::Imported;
    let what = match how {
        Imported::New => "stored",
        Imported::Updated => "updated (its content changed)",
        Imported::Unchanged => "already stored",
    };
    format!(
        "{what}: {} in {}",
        crate::escape::terminal(&dir.display().to_string()),
        crate::escape::terminal(store)
    )
}
