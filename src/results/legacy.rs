//! Format 1 of the run directory, still read and resumed: results.csv carried every
//! counter delta of a row as one JSON object in its `server_counters` column (format 2 has
//! counters.csv instead). The layout of a stored run is told by its results.csv header,
//! the one place a copied or hand-edited run cannot get out of step with.

use std::path::Path;

use anyhow::Result;

use super::check::Refused;
use crate::measure::counters::Status;
use crate::model::ResultRow;

/// Format 1's column of counter deltas.
pub(crate) const SERVER_COUNTERS: &str = "server_counters";

/// The format that results.csv has: 1 when its header has `server_counters`.
pub(crate) fn is_legacy(results: &Path) -> Result<bool> {
    super::stored_csv::has_column(results, crate::input::file::RESULTS, SERVER_COUNTERS)
}

/// Each row's counter deltas from format 1's column, in file order (the rows
/// `RunDir::rows` reads: a torn last line is left out by both), checked as counters.csv's.
pub(crate) fn counters_of_rows(results: &Path) -> Result<Vec<Status>, Refused> {
    let Some(bytes) = super::stored_csv::bytes(results, crate::input::file::RESULTS)? else {
        return Ok(Vec::new());
    };
    let (headers, records) = super::stored_csv::records(results, &bytes)?;
    let at = headers.iter().position(|h| h == SERVER_COUNTERS);
    records
        .iter()
        .map(|(line, rec)| {
            let text = at.and_then(|c| rec.get(c)).unwrap_or("");
            parse(text).map_err(|message| Refused::BadRow {
                path: results.into(),
                line: *line,
                message: format!("column {SERVER_COUNTERS}: {message}"),
            })
        })
        .collect()
}

/// A JSON object of counter name -> delta, as format 1 wrote it ("" for none).
fn parse(text: &str) -> Result<Status, String> {
    if text.is_empty() {
        return Ok(Status::new());
    }
    let status: Status = serde_json::from_str(text)
        .map_err(|e| format!("not a JSON object of counter deltas ({e})"))?;
    for (name, delta) in &status {
        crate::input::untrusted::counter_name(name)?;
        crate::model::plausible::check("delta", &delta.to_string())
            .map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(status)
}

/// `row` as a record of the columns `header` names (a results.csv an older rmatrix began,
/// which a resume appends to): a column this version lacks stays empty, one the file lacks
/// is left out, and format 1's `server_counters` gets `counters` as JSON.
pub(crate) fn project(row: &ResultRow, counters: &Status, header: &[String]) -> Vec<String> {
    let known = super::check::known_columns();
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.serialize(row)
        .expect("invariant: a row serialises to memory");
    let bytes = w
        .into_inner()
        .expect("invariant: writing to memory does not fail");
    let values = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(&bytes[..])
        .records()
        .next()
        .and_then(|r| r.ok())
        .unwrap_or_default();
    header
        .iter()
        .map(|column| match column.as_str() {
            SERVER_COUNTERS if counters.is_empty() => String::new(),
            SERVER_COUNTERS => serde_json::to_string(counters).unwrap_or_default(),
            c => known
                .iter()
                .position(|k| k == c)
                .and_then(|i| values.get(i))
                .unwrap_or("")
                .to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_1_counters_are_read_and_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("results.csv");
        let head = "server,config,engine,workload,iteration,status,server_counters,qps\n";
        std::fs::write(
            &path,
            format!(
                "{head}s,c,,w,1,ok,\"{{\"\"Com_insert\"\":5,\"\"Aborted_clients\"\":0}}\",1\n\
                 s,c,,w,2,failed,,\n"
            ),
        )
        .unwrap();
        assert!(is_legacy(&path).unwrap());
        let got = counters_of_rows(&path).unwrap();
        let want: Status = [("Aborted_clients".into(), 0), ("Com_insert".into(), 5)].into();
        assert_eq!(got, [want, Status::new()]);
        for (field, message) in [
            (
                "[1]",
                "results.csv:2: column server_counters: not a JSON object",
            ),
            (
                "\"{\"\"Com_insert\"\":-5}\"",
                "results.csv:2: column server_counters: not a JSON object",
            ),
            (
                "\"{\"\"Com\\u001b\"\":5}\"",
                "results.csv:2: column server_counters: counter name `Com\\u{1b}`",
            ),
            (
                "\"{\"\"Com_insert\"\":18000000000000000000}\"",
                "results.csv:2: column server_counters: Com_insert: delta is",
            ),
        ] {
            std::fs::write(&path, format!("{head}s,c,,w,1,ok,{field},1\n")).unwrap();
            let e = counters_of_rows(&path).unwrap_err().to_string();
            assert!(e.contains(message), "{field}: {e}");
        }
        std::fs::write(&path, "server,qps\ns,1\n").unwrap();
        assert!(!is_legacy(&path).unwrap());
        assert!(!is_legacy(&tmp.path().join("none.csv")).unwrap());
    }

    #[test]
    fn a_row_is_projected_onto_an_older_header() {
        let row = ResultRow {
            server: "s".into(),
            status: crate::model::Status::Ok,
            qps: Some(12.5),
            ..Default::default()
        };
        let header: Vec<String> = ["server", "status", "server_counters", "gone", "qps"]
            .map(String::from)
            .into();
        let counters: Status = [("Questions".into(), 3)].into();
        assert_eq!(
            project(&row, &counters, &header),
            ["s", "ok", r#"{"Questions":3}"#, "", "12.5"]
        );
        assert_eq!(project(&row, &Status::new(), &header)[2], "");
    }
}
