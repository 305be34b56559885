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

/// The command without its hidden (internal) commands: clap_complete offers every command
/// it is given, and a user has no use for the ones rmatrix runs itself.
fn visible_command() -> clap::Command {
    let full = command();
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
pub(crate) fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut visible_command(), "rmatrix", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The main man page, rmatrix(1), in roff: clap's sections, then those it does not write.
pub(crate) fn man_page() -> std::io::Result<String> {
    let man = clap_mangen::Man::new(command());
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
/// `crate::error::exit` (a test holds them to it).
const MAN_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success: every cell measured; nothing regressed.
.TP
\fB1\fR
Some cells failed (the others' results are kept), or another failure.
.TP
\fB2\fR
Bad input: a matrix (with file:line:column), a flag, a stored run or store.
.TP
\fB3\fR
No Docker engine answered.
.TP
\fB4\fR
\fBcompare\fR: a metric regressed beyond the threshold.
.TP
\fB5\fR
\fBcompare\fR, \fBhistory\fR with \fB\-\-require\-same\-env\fR: the runs' environments differ.
.TP
\fB6\fR
\fBbisect\fR: the bad end is no regression of the good end.
.TP
\fB7\fR
\fBbisect\fR: only skipped commits are left where the first bad one is.
.TP
\fB8\fR
\fBcompare \-\-fail\-on\-cannot\-tell\fR, \fBbisect\fR: no regression, but a change could not be told from noise.
.TP
\fB130\fR
Stopped by Ctrl\-C (the run directory can be resumed with \fB\-\-resume\fR).
.SH ENVIRONMENT
.TP
\fBRMATRIX_PARAM_\fR\fINAME\fR
The value of the matrix parameter \fIname\fR (\fBparams:\fR), below \fB\-\-set\fR.
.TP
\fBRMATRIX_BUILD_DIRS\fR
Colon\-separated folders a matrix's \fBbuild:\fR may name besides its own.
.TP
\fBRMATRIX_SYSBENCH\fR, \fBRMATRIX_PGBENCH\fR, \fBRMATRIX_REDIS_BENCHMARK\fR
The peer programs to run instead of those found on PATH.
.TP
\fBRMATRIX_SYSBENCH_SCRIPTS\fR
The folder of sysbench's Lua scripts.
.TP
\fBDOCKER_HOST\fR, \fBDOCKER_TLS_VERIFY\fR, \fBDOCKER_CERT_PATH\fR, \fBDOCKER_CONTEXT\fR, \fBDOCKER_CONFIG\fR
The Docker engine to use, as the docker command reads them.
.TP
\fBPGPASSWORD\fR
The password of a \fBpostgres://\fR results store.
.SH FILES
.TP
\fBreports/runs/\fR\fITIME\fR\fB\-\fR\fINAME\fR\fB/\fR
A run directory: manifest.json, results.csv, summary.md, report.html, charts.
.TP
\fBmatrices/matrix.schema.json\fR
The JSON Schema of a matrix file (\fBrmatrix schema\fR).
.SH EXAMPLES
.TP
\fBrmatrix plan matrices/binlog.yaml\fR
The cells a matrix expands to and an estimate of its time.
.TP
\fBrmatrix run matrices/binlog.yaml\fR
Run it; the run directory is printed at the end.
.TP
\fBrmatrix compare reports/runs/A reports/runs/B \-\-threshold 5%\fR
What changed from run A to run B, judged; exit code 4 on a regression.
.TP
\fBrmatrix bisect matrices/redis.yaml \-\-good 7.0.0 \-\-bad HEAD\fR
The first commit that made a cell slower.
"#;

/// Write rmatrix.1 and a page per visible command (rmatrix-run.1, ...) and per command of
/// a command (rmatrix-store-import.1, ...) into `dir`; the files written, in that order.
pub(crate) fn man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let main = dir.join("rmatrix.1");
    std::fs::write(&main, man_page()?)?;
    let mut written = vec![main];
    for sub in command().get_subcommands().filter(|s| !s.is_hide_set()) {
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
    use crate::error::exit;

    #[test]
    fn the_man_page_lists_every_exit_code() {
        let codes = [
            exit::OK,
            exit::CELLS_FAILED,
            exit::BAD_INPUT,
            exit::NO_DOCKER,
            exit::REGRESSION,
            exit::ENV_DIFFERS,
            exit::NOT_REPRODUCED,
            exit::ONLY_SKIPPED,
            exit::CANNOT_TELL,
            exit::INTERRUPTED,
        ];
        for code in codes {
            assert!(
                MAN_SECTIONS.contains(&format!(".TP\n\\fB{code}\\fR\n")),
                "{code}"
            );
        }
    }

    #[test]
    fn completions_leave_out_the_internal_commands() {
        let bash = completions(clap_complete::Shell::Bash);
        assert!(bash.contains("compare"));
        for internal in ["drive-cell", "await-server", "engine-port"] {
            assert!(!bash.contains(internal), "{internal}");
        }
    }
}
