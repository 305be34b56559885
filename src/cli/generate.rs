//! What is generated from the command line's own definition: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), so that neither can fall behind an option.

use std::path::{Path, PathBuf};

use clap::CommandFactory;

use super::Cli;

/// The command as the generators see it: `help` is an option, not a command of its own.
fn command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The completion script of `shell`.
pub(crate) fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "rmatrix", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The main man page, rmatrix(1), in roff.
pub(crate) fn man_page() -> std::io::Result<String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command()).render(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Write rmatrix.1 and a page per visible command (rmatrix-run.1, ...) and per command of
/// a command (rmatrix-store-import.1, ...) into `dir`; the files written, in that order.
pub(crate) fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    pages(&command(), dir, &mut written)?;
    Ok(written)
}

fn pages(cmd: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    written.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, dir, written)?;
    }
    Ok(())
}
