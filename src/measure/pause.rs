//! A measured phase the server sat out. A pause shorter than `stall_timeout` (`docker pause`,
//! a frozen host, a VM migrated) passes the stall watchdog, and the phase then holds seconds in
//! which nothing was measured: its throughput is the pause's, not the server's. Such an
//! iteration is failed (a `--resume` measures it again), by this rule:
//!
//! - a timed phase that lasted longer than its length by more than max(2 s, half the length):
//!   closed-loop clients stop at the deadline and open-loop ones stop sending, so an overrun
//!   is requests held up past it (the slack leaves a slow last request on a busy host be);
//! - or, in the phase's per-second samples, [`GAP_SECONDS`] or more whole seconds in a row
//!   with no completed operation and no error, in a phase that averaged at least
//!   [`GAP_MIN_RATE`] operations a second (at lower rates an empty second is ordinary).
//!
//! A slow second is not a gap: a server that merely slowed down (a checkpoint, a compaction)
//! is measured as it was.

use std::time::Duration;

use super::interval::Sample;

/// Empty seconds in a row that make a gap.
pub(crate) const GAP_SECONDS: usize = 3;
/// The phase's mean rate (operations a second) below which empty seconds are not judged.
pub(crate) const GAP_MIN_RATE: f64 = 10.0;

/// Why a measured phase of `seconds` is not a measurement, if it is not. `length` is the
/// phase's duration when it is timed (None: a count, or a workload that ignores `length`).
pub(crate) fn sat_out(
    length: Option<Duration>,
    seconds: f64,
    samples: &[Sample],
) -> Option<String> {
    if let Some(length) = length {
        let (want, slack) = (length.as_secs_f64(), (length.as_secs_f64() / 2.0).max(2.0));
        if seconds > want + slack {
            return Some(format!(
                "the measured phase lasted {seconds:.1} s for a length of {want:.1} s: the server \
                 stopped answering for a while (a pause shorter than stall_timeout); not measured"
            ));
        }
    }
    let gap = longest_gap(samples);
    (gap >= GAP_SECONDS).then(|| {
        format!(
            "no operation completed for {gap} s in a row of the measured phase: the server \
             stopped answering for a while (a pause shorter than stall_timeout); not measured"
        )
    })
}

/// The longest run of empty seconds before the last sample (the last second may be partial),
/// in a phase whose mean rate is at least `GAP_MIN_RATE`; 0 otherwise.
fn longest_gap(samples: &[Sample]) -> usize {
    let Some((_, whole)) = samples.split_last() else {
        return 0;
    };
    let mean = samples.iter().map(|s| s.qps).sum::<f64>() / samples.len() as f64;
    if mean < GAP_MIN_RATE {
        return 0;
    }
    let (mut longest, mut run) = (0, 0);
    for s in whole {
        run = match s.qps == 0.0 && s.errors_ps == 0.0 {
            true => run + 1,
            false => 0,
        };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(qps: &[f64]) -> Vec<Sample> {
        qps.iter()
            .enumerate()
            .map(|(i, &q)| Sample {
                second: i as u32 + 1,
                threads: 8,
                tps: q,
                qps: q,
                reads_ps: q,
                writes_ps: 0.0,
                others_ps: 0.0,
                lat_pct_ms: 1.0,
                lat_p99_ms: None,
                errors_ps: 0.0,
                reconnects_ps: 0.0,
                target_ps: None,
                client_busy_pct: None,
            })
            .collect()
    }

    /// The finding: a 10 s `docker pause` in a 2 s cell gave an ok row of 10.98 s.
    #[test]
    fn a_timed_phase_that_overran_is_not_a_measurement() {
        let two = Some(Duration::from_secs(2));
        let why = sat_out(two, 10.98, &[]).expect("overrun");
        assert!(why.contains("lasted 11.0 s for a length of 2.0 s"), "{why}");
        // The deadline plus a slow last request: measured.
        assert_eq!(sat_out(two, 3.9, &[]), None);
        // Half a long length is the slack.
        assert_eq!(sat_out(Some(Duration::from_secs(60)), 89.0, &[]), None);
        assert!(sat_out(Some(Duration::from_secs(60)), 91.0, &[]).is_some());
    }

    #[test]
    fn three_empty_seconds_mid_phase_are_a_gap_and_fewer_are_not() {
        let why = sat_out(
            None,
            7.0,
            &seconds(&[900.0, 0.0, 0.0, 0.0, 950.0, 980.0, 400.0]),
        );
        assert!(why.expect("gap").contains("for 3 s in a row"));
        assert_eq!(
            sat_out(None, 6.0, &seconds(&[900.0, 0.0, 0.0, 950.0, 5.0, 980.0])),
            None
        );
        // The last second is partial: an empty one there is the phase's end.
        assert_eq!(
            sat_out(None, 5.0, &seconds(&[900.0, 950.0, 0.0, 0.0, 0.0])),
            None
        );
        // Empty seconds at 4 operations a second are ordinary.
        assert_eq!(
            sat_out(None, 6.0, &seconds(&[8.0, 0.0, 0.0, 0.0, 8.0, 8.0])),
            None
        );
    }
}
