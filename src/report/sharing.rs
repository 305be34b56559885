//! summary.md's warning when cells ran beside another rmatrix run on the same engine: their
//! numbers include that run's load (`beside_runs` in results.csv says which).

use crate::escape::md_text;
use crate::model::row::ResultRow;

/// Cells named before the rest is only counted.
const MAX_NAMED: usize = 10;

/// The warning for `rows` (the current ones), or nothing when every iteration ran alone.
pub(crate) fn section(rows: &[ResultRow]) -> String {
    let beside: Vec<&ResultRow> = rows
        .iter()
        .filter(|r| r.is_ok() && r.beside_runs.unwrap_or(0) > 0)
        .collect();
    if beside.is_empty() {
        return String::new();
    }
    let ok = rows.iter().filter(|r| r.is_ok()).count();
    let mut out = format!(
        "\n**Shared machine**: {} of {ok} measured iterations ran while another rmatrix run had \
         containers on the same engine (`beside_runs` in results.csv); their numbers include \
         its load:\n\n",
        beside.len()
    );
    for r in beside.iter().take(MAX_NAMED) {
        out.push_str(&format!(
            "- {} #{} (beside {} other run(s))\n",
            md_text(r.cell_key().as_str()),
            r.iteration,
            r.beside_runs.unwrap_or(0)
        ));
    }
    if beside.len() > MAX_NAMED {
        out.push_str(&format!("- and {} more\n", beside.len() - MAX_NAMED));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(beside: Option<u32>, ok: bool) -> ResultRow {
        let mut r = ResultRow {
            server: "redis".into(),
            config: "default".into(),
            workload: "get".into(),
            concurrency: 8,
            iteration: 1,
            beside_runs: beside,
            ..ResultRow::default()
        };
        if ok {
            r.status = crate::model::row::Status::Ok;
        }
        r
    }

    #[test]
    fn only_iterations_beside_another_run_are_named() {
        assert_eq!(section(&[row(Some(0), true), row(None, true)]), "");
        // A failed iteration is no measurement to warn about.
        assert_eq!(section(&[row(Some(2), false)]), "");
        let text = section(&[row(Some(1), true), row(Some(0), true)]);
        assert!(text.contains("1 of 2 measured iterations"), "{text}");
        assert!(text.contains("#1 (beside 1 other run(s))"), "{text}");
    }
}
