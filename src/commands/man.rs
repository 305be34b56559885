//! `rmatrix man`: the man pages, generated from the parser.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::generate;
use super::stdio::emit;
use crate::error::Outcome;

/// `rmatrix man`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write the pages into this folder (created if missing) instead of printing the
    /// main page.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// The main page of the parser `cli` on stdout, or every page into `--out` (each named on
/// stderr).
pub(super) fn man(a: &ManArgs, cli: clap::Command) -> Result<Outcome> {
    let Some(dir) = a.out.as_deref() else {
        emit(&generate::man_page(cli)?)?;
        return Ok(Outcome::Done);
    };
    let shown = |p: &Path| crate::escape::terminal(&p.display().to_string());
    let written = generate::man_pages(cli, dir)
        .map_err(|e| anyhow::anyhow!("failed to write the man pages into {}: {e}", shown(dir)))?;
    for page in written {
        eprintln!("wrote {}", shown(&page));
    }
    Ok(Outcome::Done)
}
