//! What is generated from the command line's own definition: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), so that neither can fall behind an option.

use std::path::{Path, PathBuf};

/// The command as the generators see it: `help` is an option, not a command of its own.
/// `cli` is the parser's definition (`Cli::command()`), given by the caller so that this
/// module needs no import of the parser, whose commands include the ones that use it.
fn command(cli: clap::Command) -> clap::Command {
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The command without its hidden (internal) commands: clap_complete offers every command
/// it is given, and a user has no use for the ones rmatrix runs itself.
fn visible_command(cli: clap::Command) -> clap::Command {
    let full = command(cli);
    let visible: Vec<clap::Command> = (full.get_subcommands())
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut cmd = clap::Command::new("rmatrix")
        .version(env!("CARGO_PKG_VERSION"))
        .about(full.get_about().cloned().unwrap_or_default())
        .disable_help_subcommand(true)
        .subcommands(visible);
    cmd.build();
    cmd
}

/// The completion script of `shell`.
pub(crate) fn completions(cli: clap::Command, shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut visible_command(cli), "rmatrix", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The main man page, rmatrix(1), in roff: clap's sections, then those it does not write.
pub(crate) fn man_page(cli: clap::Command) -> std::io::Result<String> {
    let man = clap_mangen::Man::new(command(cli));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    out.extend_from_slice(MAN_SECTIONS.as_bytes());
    man.render_version_section(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES of rmatrix(1). The exit codes are those of
/// `exit::End::code` (a test holds them to it).
const MAN_SECTIONS: &str = include_str!("man-sections.roff");

/// Write rmatrix.1 and a page per visible command (rmatrix-run.1, ...) and per command of
/// a command (rmatrix-store-import.1, ...) into `dir`; the files written, in that order.
pub(crate) fn man_pages(cli: clap::Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let main = dir.join("rmatrix.1");
    std::fs::write(&main, man_page(cli.clone())?)?;
    let mut written = vec![main];
    for sub in command(cli).get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, dir, &mut written)?;
    }
    Ok(written)
}

fn pages(cmd: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    written.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub, dir, written)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_lists_every_exit_code() {
        for code in crate::commands::exit::every_end()
            .into_iter()
            .map(|e| e.code())
        {
            assert!(
                MAN_SECTIONS.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                "{code}"
            );
        }
    }
}
