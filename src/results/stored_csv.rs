//! The records of a stored CSV file of a run directory (results.csv, samples.csv,
//! warmup.csv, operations.csv), each with the file's own line number (counted from its
//! byte offset: the csv crate's line is off by one on a first row and does not count the
//! line ends inside quoted fields), every measured value checked against its plausible
//! range (`model::plausible`), and refusals in column names instead of field indexes.

use std::path::Path;

use super::check::Refused;
use crate::input::file::Cap;

/// The complete lines of the file at `path` (see `files::complete_lines`); `None` when
/// there is no such file.
pub(crate) fn bytes(path: &Path, cap: Cap) -> Result<Option<Vec<u8>>, Refused> {
    match super::files::complete_lines(path, cap) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The names of the header line of the CSV file at `path`; `None` when there is no file or
/// it is empty. A header is a few hundred bytes: no more than 64 KiB is read of whatever
/// the file is.
pub(crate) fn header(path: &Path, cap: Cap) -> anyhow::Result<Option<Vec<String>>> {
    use anyhow::Context as _;
    use std::io::{BufRead as _, Read as _};
    let file = match crate::input::file::open(path, cap) {
        Ok(f) => f,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut line = String::new();
    std::io::BufReader::new(file.take(64 * 1024))
        .read_line(&mut line)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let line = line.trim_end_matches(['\r', '\n']);
    Ok((!line.is_empty()).then(|| line.split(',').map(str::to_string).collect()))
}

/// Whether the header line of the CSV file at `path` names `column`.
pub(crate) fn has_column(path: &Path, cap: Cap, column: &str) -> anyhow::Result<bool> {
    Ok(header(path, cap)?.is_some_and(|h| h.iter().any(|c| c == column)))
}

/// Each record of `bytes` (the file at `path`) with its line, checked (see the module).
pub(crate) fn records(
    path: &Path,
    bytes: &[u8],
) -> Result<(csv::StringRecord, Vec<(u64, csv::StringRecord)>), Refused> {
    let mut r = csv::Reader::from_reader(bytes);
    let headers = r.headers().map_err(|e| csv_err(path, bytes, e))?.clone();
    let mut out = Vec::new();
    // Lines are counted on from the last record's: counting from the start each time made
    // reading a file of many short lines (counters.csv) quadratic.
    let mut counted = (0, 1);
    for rec in r.records() {
        let rec = rec.map_err(|e| csv_err(path, bytes, e))?;
        let line = rec.position().map_or(0, |p| {
            counted = line_after(bytes, counted, p.byte());
            counted.1
        });
        for (column, text) in headers.iter().zip(rec.iter()) {
            crate::model::plausible::check(column, text).map_err(|message| Refused::BadRow {
                path: path.into(),
                line,
                message,
            })?;
        }
        out.push((line, rec));
    }
    Ok((headers, out))
}

/// Each record of `bytes` deserialized by its header's names, with its line.
pub(crate) fn deserialize<T: serde::de::DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
) -> Result<Vec<(u64, T)>, Refused> {
    let (headers, records) = records(path, bytes)?;
    records
        .into_iter()
        .map(|(line, rec)| {
            let row = rec
                .deserialize(Some(&headers))
                .map_err(|e| Refused::BadRow {
                    path: path.into(),
                    line,
                    message: deserialize_message(&e, &headers),
                })?;
            Ok((line, row))
        })
        .collect()
}

/// The line (from 1) of the record that starts at byte `offset` of `bytes`. The csv crate
/// puts a record after a `\r\n` at its `\n`: line ends at the offset are skipped.
fn line_at(bytes: &[u8], offset: u64) -> u64 {
    line_after(bytes, (0, 1), offset).1
}

/// `line_at`, counting on from `(byte, line)`, a record start before `offset` and its line.
fn line_after(bytes: &[u8], (from, line): (usize, u64), offset: u64) -> (usize, u64) {
    let mut start = (offset as usize).min(bytes.len());
    while bytes.get(start).is_some_and(|b| matches!(b, b'\r' | b'\n')) {
        start += 1;
    }
    let from = from.min(start);
    let more = bytes[from..start].iter().filter(|b| **b == b'\n').count() as u64;
    (start, line + more)
}

/// A CSV error as a refusal of the file at the line it happened on.
pub(crate) fn csv_err(path: &Path, bytes: &[u8], e: csv::Error) -> Refused {
    let line = e.position().map_or(1, |p| line_at(bytes, p.byte()));
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "the row has {len} field{}, the header {expected_len}",
            if *len == 1 { "" } else { "s" }
        ),
        csv::ErrorKind::Utf8 { err, .. } => {
            format!("field {} is not UTF-8 text", err.field() + 1)
        }
        _ => e.to_string(),
    };
    match e.into_kind() {
        csv::ErrorKind::Io(source) => Refused::Io {
            path: path.into(),
            source,
        },
        _ => Refused::BadRow {
            path: path.into(),
            line,
            message,
        },
    }
}

/// `column qps: invalid float literal` rather than csv's field index.
pub(crate) fn deserialize_message(e: &csv::Error, known: &csv::StringRecord) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => {
            // A field's own error (an unknown status) says what it is about already.
            match err.field().and_then(|f| known.get(f as usize)) {
                Some(column) => format!("column {column}: {}", err.kind()),
                None => err.kind().to_string(),
            }
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_the_files_own() {
        let p = Path::new("results.csv");
        // The first row, and a row after a quoted field with a line end in it.
        let bytes = b"a,qps\nx,1\n\"y\nz\",2\nw,1e308\n";
        let crlf = records(p, b"a,qps\r\nx,1e308\r\n").unwrap_err();
        assert!(crlf.to_string().starts_with("results.csv:2: "), "{crlf}");
        let e = records(p, bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "results.csv:5: qps is 1e308; no measurement reaches that (the plausible range of \
             qps ends at 10^10 per second, docs/run-directory.md)"
        );
        let e = records(p, b"a,b,c\nx,y\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "results.csv:2: the row has 2 fields, the header 3"
        );
        let e = records(p, b"a,b\nx,\xff\n").unwrap_err();
        assert_eq!(e.to_string(), "results.csv:2: field 2 is not UTF-8 text");
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct Row {
            a: String,
            qps: f64,
        }
        let e = deserialize::<Row>(p, b"a,qps\nx,fast\n").err().unwrap();
        assert_eq!(
            e.to_string(),
            "results.csv:2: column qps: invalid float literal"
        );
    }
}
