//! `rmatrix completions SHELL`: the shell's completion script, generated from the parser.

use anyhow::Result;

use super::stdio::emit;
use crate::error::Outcome;

/// `rmatrix completions`' options.
#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Print the completion script of `a.shell` for the parser `cli`.
pub(super) fn completions(a: &CompletionsArgs, cli: clap::Command) -> Result<Outcome> {
    emit(&super::generate::completions(cli, a.shell))?;
    Ok(Outcome::Done)
}
