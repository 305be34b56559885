//! summary.md's warning for client-bound cells: where the client wanted at least
//! `measure::client::BOUND_PCT` of the CPU it may use, the throughput is the client's limit,
//! not the server's (`client_busy_pct` in results.csv).

use std::collections::BTreeMap;

use crate::escape::md_text;
use crate::measure::client::BOUND_PCT;
use crate::model::row::ResultRow;

/// A client-bound cell: its name (`redis / default / get / c8`), its iterations' mean busy
/// percent, the fewest cores it had.
pub(crate) struct Bound {
    pub(crate) cell: String,
    pub(crate) busy_pct: f64,
    pub(crate) cores: f64,
}

/// The cells of `rows` whose successful iterations' client was busy `BOUND_PCT` or more on
/// average, in the rows' order.
pub(crate) fn cells(rows: &[ResultRow]) -> Vec<Bound> {
    let mut by_cell: BTreeMap<String, (usize, Vec<f64>, f64)> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.is_ok()) {
        if let (Some(busy), Some(cores)) = (r.client_busy_pct, r.client_cores) {
            let e = by_cell
                .entry(super::markdown::cell_name(r))
                .or_insert((i, Vec::new(), cores));
            e.1.push(busy);
            e.2 = e.2.min(cores);
        }
    }
    let mut out: Vec<(usize, Bound)> = by_cell
        .into_iter()
        .filter_map(|(cell, (first, busy, cores))| {
            let mean = busy.iter().sum::<f64>() / busy.len() as f64;
            (mean >= BOUND_PCT).then_some((
                first,
                Bound {
                    cell,
                    busy_pct: mean,
                    cores,
                },
            ))
        })
        .collect();
    out.sort_by_key(|(first, _)| *first);
    out.into_iter().map(|(_, b)| b).collect()
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
         results.csv): their throughput is the client's limit, not the server's:\n\n",
        bound.len()
    );
    for b in &bound {
        out.push_str(&format!(
            "- {}: client busy {:.0}% of {} core(s)\n",
            md_text(&b.cell),
            b.busy_pct,
            b.cores
        ));
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
}
