//! summary.md's warning for client-bound cells: where the client wanted at least
//! `measure::client::BOUND_PCT` of the CPU it may use (`client_busy_pct` in results.csv), or
//! where the open-loop pacer itself released arrivals late (`pacer_late`), the throughput is
//! the client's limit, not the server's.

use std::collections::BTreeMap;

use crate::escape::md_text;
use crate::measure::client::BOUND_PCT;
use crate::model::row::ResultRow;

/// Share of an open-loop cell's arrivals that its pacer released late, in percent, above
/// which the client fell behind: an on-time release ends 20-40 us after its time here.
pub(crate) const PACER_LATE_PCT: f64 = 1.0;

/// A client-bound cell: its name (`redis / default / get / c8`) and why.
pub(crate) struct Bound {
    pub(crate) cell: String,
    pub(crate) why: Why,
}

/// What made a cell client-bound.
pub(crate) enum Why {
    /// Its iterations' mean busy percent on the fewest cores it had.
    Busy { busy_pct: f64, cores: f64 },
    /// The percent of its arrivals the pacer released late.
    PacerLate { late_pct: f64 },
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Busy { busy_pct, cores } => {
                write!(f, "client busy {busy_pct:.0}% of {cores} core(s)")
            }
            Why::PacerLate { late_pct } => {
                write!(f, "the pacer released {late_pct:.1}% of the arrivals late")
            }
        }
    }
}

/// Per cell (in the rows' order of first appearance) its successful iterations' busy
/// percents, fewest cores, and pacer-late and scheduled arrivals.
#[derive(Default)]
struct Tally {
    first: usize,
    busy: Vec<f64>,
    cores: f64,
    late: u64,
    scheduled: u64,
}

/// The client-bound cells of `rows`, in the rows' order.
pub(crate) fn cells(rows: &[ResultRow]) -> Vec<Bound> {
    let mut by_cell: BTreeMap<String, Tally> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.is_ok()) {
        let t = by_cell
            .entry(super::markdown::cell_name(r))
            .or_insert_with(|| Tally {
                first: i,
                cores: f64::INFINITY,
                ..Tally::default()
            });
        if let (Some(busy), Some(cores)) = (r.client_busy_pct, r.client_cores) {
            t.busy.push(busy);
            t.cores = t.cores.min(cores);
        }
        if let (Some(late), Some(scheduled)) = (r.pacer_late, r.scheduled) {
            (t.late, t.scheduled) = (t.late + late, t.scheduled + scheduled);
        }
    }
    let mut out: Vec<(usize, Bound)> = by_cell
        .into_iter()
        .filter_map(|(cell, t)| {
            Some((
                t.first,
                Bound {
                    cell,
                    why: why(&t)?,
                },
            ))
        })
        .collect();
    out.sort_by_key(|(first, _)| *first);
    out.into_iter().map(|(_, b)| b).collect()
}

/// Why a cell's tally makes it client-bound, if it does.
fn why(t: &Tally) -> Option<Why> {
    let busy_pct = t.busy.iter().sum::<f64>() / t.busy.len().max(1) as f64;
    let late_pct = t.late as f64 * 100.0 / t.scheduled.max(1) as f64;
    if !t.busy.is_empty() && busy_pct >= BOUND_PCT {
        Some(Why::Busy {
            busy_pct,
            cores: t.cores,
        })
    } else if t.scheduled > 0 && late_pct >= PACER_LATE_PCT {
        Some(Why::PacerLate { late_pct })
    } else {
        None
    }
}

/// The warning for `rows` (the current ones), or nothing when no cell was client-bound.
pub(crate) fn section(rows: &[ResultRow]) -> String {
    let bound = cells(rows);
    if bound.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n**Client-bound**: in {} cell(s) the client wanted {BOUND_PCT:.0}% or more of the CPU \
         it may use (its threads running or waiting for a core; `client_busy_pct` in \
         results.csv), or its open-loop pacer released {PACER_LATE_PCT}% or more of the \
         arrivals late (`pacer_late`): their throughput is the client's limit, not the \
         server's:\n\n",
        bound.len()
    );
    for b in &bound {
        out.push_str(&format!("- {}: {}\n", md_text(&b.cell), b.why));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(workload: &str, busy: Option<f64>) -> ResultRow {
        ResultRow {
            server: "redis".into(),
            config: "default".into(),
            workload: workload.into(),
            concurrency: 8,
            iteration: 1,
            status: crate::model::row::Status::Ok,
            client_busy_pct: busy,
            client_cores: busy.map(|_| 1.0),
            ..ResultRow::default()
        }
    }

    #[test]
    fn only_cells_whose_client_was_busy_on_average_are_named() {
        assert_eq!(section(&[row("get", Some(40.0)), row("set", None)]), "");
        let rows = [
            row("set", Some(97.0)),
            row("set", Some(91.0)),
            row("get", Some(95.0)),
            row("get", Some(70.0)),
        ];
        let text = section(&rows);
        assert!(text.contains("in 1 cell(s)"), "{text}");
        assert!(
            text.contains("redis / default / set / c8: client busy 94% of 1 core(s)"),
            "{text}"
        );
        assert!(!text.contains("get"), "{text}");
    }

    #[test]
    fn an_open_loop_cell_whose_pacer_fell_behind_is_named() {
        let paced = |late: u64| ResultRow {
            scheduled: Some(1000),
            pacer_late: Some(late),
            ..row("get", Some(30.0))
        };
        assert_eq!(section(&[paced(5), paced(4)]), "");
        let text = section(&[paced(30), paced(0)]);
        assert!(
            text.contains("get / c8: the pacer released 1.5% of the arrivals late"),
            "{text}"
        );
    }
}
