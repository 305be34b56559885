//! Progress on long runs: a bar with the current cell and its live rate on a terminal,
//! one line per finished iteration otherwise, nothing in quiet mode.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::model::cell::{Cell, CellKey};

pub(crate) struct Progress {
    bar: ProgressBar,
    lines: bool,
    eta: Mutex<Option<Eta>>,
}

/// The time left, from the plan's estimate (`results::estimate`): what the iterations still
/// to run were estimated to take, scaled by how the finished ones compared with theirs.
#[derive(Debug, Clone)]
struct Eta {
    started: Instant,
    /// Estimated seconds of every iteration this run measures, and of those finished.
    total: f64,
    done: f64,
    /// Each cell's estimated seconds per iteration, its share of the server starts included.
    per_iteration: HashMap<CellKey, f64>,
}

impl Eta {
    fn left(&self, elapsed: f64) -> f64 {
        let rest = (self.total - self.done).max(0.0);
        match self.done > 0.0 {
            // Scaled by the run's own pace so far, within reason: one slow first
            // iteration (a prepare) does not triple the rest.
            true => rest * (elapsed / self.done).clamp(0.25, 4.0),
            false => (self.total - elapsed).max(0.0),
        }
    }
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
            ProgressStyle::with_template("{elapsed_precise} {prefix}[{bar:30}] {pos}/{len} {msg}")
                .expect("invariant: valid progress template")
                .progress_chars("=> "),
        );
        if tty && !quiet {
            bar.enable_steady_tick(Duration::from_millis(500));
        }
        Progress {
            bar,
            lines: !quiet && !tty,
            eta: Mutex::new(None),
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

    /// One iteration of `cell` done.
    pub(crate) fn advance(&self, cell: &Cell) {
        self.bar.inc(1);
        let mut eta = self.eta.lock().expect("eta lock");
        if let Some(e) = eta.as_mut() {
            e.done += e.per_iteration.get(&cell.key()).copied().unwrap_or(0.0);
            let left = e.left(e.started.elapsed().as_secs_f64());
            self.bar.set_prefix(format!(
                "ETA {} ",
                crate::results::estimate::Estimate::shown(left)
            ));
        }
    }

    /// The plan's estimate of each cell's iterations and of all this run measures, in
    /// seconds: the ETA's base.
    pub(crate) fn set_estimate(&self, per_iteration: HashMap<CellKey, f64>, total: f64) {
        *self.eta.lock().expect("eta lock") = Some(Eta {
            started: Instant::now(),
            total,
            done: 0.0,
            per_iteration,
        });
        self.bar.set_prefix(format!(
            "ETA {} ",
            crate::results::estimate::Estimate::shown(total)
        ));
    }

    /// `ETA ~3m10s` for a finished iteration's line, empty without an estimate.
    pub(crate) fn eta_text(&self) -> String {
        let eta = self.eta.lock().expect("eta lock");
        match eta.as_ref() {
            Some(e) => format!(
                ", ETA {}",
                crate::results::estimate::Estimate::shown(
                    e.left(e.started.elapsed().as_secs_f64())
                )
            ),
            None => String::new(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The ETA is the estimate of what is left, scaled by the run's pace so far: before any
    /// iteration finished, the estimate less the time gone; one slow first iteration does
    /// not scale the rest by more than 4.
    #[test]
    fn the_eta_scales_what_is_left_by_the_pace_so_far() {
        let mut e = Eta {
            started: Instant::now(),
            total: 100.0,
            done: 0.0,
            per_iteration: HashMap::new(),
        };
        assert_eq!(e.left(30.0), 70.0);
        assert_eq!(e.left(130.0), 0.0);
        e.done = 50.0;
        assert_eq!(e.left(50.0), 50.0);
        assert_eq!(e.left(100.0), 100.0);
        assert_eq!(e.left(1000.0), 200.0);
        assert_eq!(e.left(1.0), 12.5);
    }
}
