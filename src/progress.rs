//! Progress on long runs: a bar with the current cell and its live rate on a terminal,
//! one line per finished iteration otherwise, nothing in quiet mode.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub(crate) struct Progress {
    bar: ProgressBar,
    lines: bool,
}

impl Progress {
    pub(crate) fn new(total: u64, quiet: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let target = if quiet || !tty {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .expect("invariant: valid progress template")
                .progress_chars("=> "),
        );
        if tty && !quiet {
            bar.enable_steady_tick(Duration::from_millis(500));
        }
        Progress {
            bar,
            lines: !quiet && !tty,
        }
    }

    pub(crate) fn status(&self, msg: String) {
        self.bar.set_message(crate::escape::terminal(&msg));
    }

    /// A finished iteration or an event worth a line of its own.
    pub(crate) fn line(&self, msg: String) {
        let msg = crate::escape::terminal(&msg);
        if self.lines {
            // A closed stderr (`rmatrix run ... 2>&1 | head -2`) must not stop the run.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{msg}");
        } else {
            self.bar.println(msg);
        }
    }

    /// More work than planned (adaptive repeats).
    pub(crate) fn add(&self, n: u64) {
        self.bar.inc_length(n);
    }

    pub(crate) fn advance(&self) {
        self.bar.inc(1);
    }

    pub(crate) fn position(&self) -> u64 {
        self.bar.position()
    }

    pub(crate) fn length(&self) -> u64 {
        self.bar.length().unwrap_or(0)
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress {
    /// A handle for a background task that updates the status line.
    pub(crate) fn bar_handle(&self) -> ProgressBar {
        self.bar.clone()
    }
}
