//! The host's CPU pressure over an iteration: Linux's pressure stall information
//! (`/proc/pressure/cpu`), whose `some total` counts the microseconds in which at least one
//! runnable task waited for a CPU. Whatever else runs on the host (another run, a compile)
//! shows here, and the row keeps it beside the numbers it may have moved.

use std::time::Instant;

const PSI_CPU: &str = "/proc/pressure/cpu";

/// A reading of the host's CPU pressure, to be compared with a later one.
pub(crate) struct CpuPressure {
    stalled_us: u64,
    at: Instant,
}

impl CpuPressure {
    /// Now; None on a kernel without PSI (or with it switched off).
    pub(crate) fn read() -> Option<CpuPressure> {
        let stalled_us = some_total(&std::fs::read_to_string(PSI_CPU).ok()?)?;
        Some(CpuPressure {
            stalled_us,
            at: Instant::now(),
        })
    }

    /// Percent of the wall time since this reading in which some task waited for a CPU.
    pub(crate) fn percent_since(&self) -> Option<f64> {
        let now = CpuPressure::read()?;
        let wall_us = now.at.duration_since(self.at).as_micros() as f64;
        let stalled = now.stalled_us.checked_sub(self.stalled_us)? as f64;
        (wall_us > 0.0).then(|| (100.0 * stalled / wall_us).min(100.0))
    }
}

/// `total=` of the `some` line.
fn some_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_some_line_gives_the_stalled_microseconds() {
        let text = "some avg10=90.25 avg60=76.08 avg300=66.50 total=11600466041\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(some_total(text), Some(11_600_466_041));
        assert_eq!(some_total("full total=3\n"), None);
        assert_eq!(some_total("some total=x\n"), None);
    }
}
