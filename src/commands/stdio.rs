//! A command's stdin and stdout.

use anyhow::Result;

/// All of stdin (a cell or a server to wait for, sent by the orchestrating process).
pub(super) fn stdin_text() -> Result<String> {
    Ok(crate::input::file::read_stdin(crate::input::file::STDIN)?)
}

/// Write a command's output to stdout. A reader that went away (`rmatrix report DIR | head`)
/// ends the output quietly instead of a panic on the broken pipe.
pub(super) fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
