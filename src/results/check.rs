//! Reading a stored run for `compare`, `history` and `report`: results that cannot be right
//! are refused, not averaged. Each refusal names the file, and the line of a results.csv row.
//!
//! What is refused:
//! - a measured value (a float column) that is NaN, infinite or negative;
//! - a status other than `ok` and `failed`;
//! - two `ok` rows for one (cell, iteration). `--resume` reruns only the iterations without an
//!   `ok` row and appends the new row, so failed rows followed by one `ok` row are a normal
//!   history; a second `ok` row means two measurements claim the same iteration;
//! - a metric asked for whose column results.csv lacks (older files lack the columns added
//!   since, and still read: only asking for such a metric is an error);
//! - a manifest.json that is not JSON, or whose `format_version` is missing, malformed or not
//!   one this rmatrix knows. results.csv carries no version of its own: the manifest's covers
//!   the whole run directory.
//!
//! Not refused: a torn last line (no line end), what a kill in the middle of a write leaves.
//! It is left out, and `--resume` cuts it off and measures that iteration again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{stored_csv, ResultRow, FORMAT_VERSION};

#[derive(Debug)]
pub(crate) enum Refused {
    File(crate::input::file::FileError),
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    BadRow {
        path: PathBuf,
        line: u64,
        message: String,
    },
    Duplicate {
        path: PathBuf,
        line: u64,
        first: u64,
        cell: String,
        iteration: u32,
    },
    MissingColumn {
        path: PathBuf,
        column: String,
    },
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    NewerFormat {
        path: PathBuf,
        found: u64,
    },
    UnknownFormat {
        path: PathBuf,
        found: String,
    },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use Refused::*;
        match self {
            File(e) => e.fmt(f),
            Io { path, .. } => write!(f, "failed to read {}", path.display()),
            BadRow {
                path,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
            Duplicate {
                path,
                line,
                first,
                cell,
                iteration,
            } => write!(
                f,
                "{}:{line}: a second ok row for {cell} iteration {iteration} (the first is on \
                 line {first}); an iteration has one result, and --resume only reruns failed ones",
                path.display()
            ),
            MissingColumn { path, column } => write!(
                f,
                "{} has no `{column}` column, so metric `{column}` cannot be read from it \
                 (written by an older rmatrix?)",
                path.display()
            ),
            NotJson { path, .. } => write!(f, "failed to parse {} as JSON", path.display()),
            NewerFormat { path, found } => write!(
                f,
                "{}: format_version {found} is newer than this rmatrix understands \
                 ({FORMAT_VERSION}); use a newer rmatrix",
                path.display()
            ),
            UnknownFormat { path, found } => write!(
                f,
                "{}: format_version {found} is not a version this rmatrix knows (it reads 1 \
                 to {FORMAT_VERSION})",
                path.display()
            ),
        }
    }
}

impl From<crate::input::file::FileError> for Refused {
    fn from(e: crate::input::file::FileError) -> Self {
        Refused::File(e)
    }
}

impl crate::error::Kinded for Refused {
    fn kind(&self) -> crate::error::ErrorKind {
        // A stored run rmatrix cannot read or trust is an input to fix.
        crate::error::ErrorKind::BadInput
    }

    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Refused::File(e) => crate::error::Kinded::source(e),
            Refused::Io { source, .. } => Some(source),
            Refused::NotJson { source, .. } => Some(source),
            _ => None,
        }
    }
}

crate::error::kinded!(Refused);

/// The rows of a results.csv and the columns its header has.
#[derive(Debug, Clone, Default)]
pub(crate) struct Results {
    pub(crate) rows: Vec<ResultRow>,
    pub(crate) columns: Vec<String>,
}

/// Read and check a results.csv. Columns this version knows but the file lacks (it was
/// written by an older rmatrix; columns are only ever added) are read as empty.
pub(crate) fn read_results(path: &Path) -> Result<Results, Refused> {
    // A torn last line (a kill in the middle of a write) is left out, as `--resume` cuts it.
    let bytes = super::files::complete_lines(path, crate::input::file::RESULTS)?;
    if std::fs::metadata(path).is_ok_and(|m| m.len() > bytes.len() as u64) {
        eprintln!(
            "warning: {}: left out a torn last row (the run stopped while writing it; \
             `rmatrix run --resume` cuts it off and measures that iteration again)",
            crate::escape::terminal(&path.display().to_string())
        );
    }
    parse_results(path, &bytes)
}

/// Check the bytes of a results.csv (its header and complete lines); `path` names them in a
/// refusal (a file, or a run in a store).
pub(crate) fn parse_results(path: &Path, bytes: &[u8]) -> Result<Results, Refused> {
    let known = known_columns();
    let (have, records) = stored_csv::records(path, bytes)?;
    let pos: Vec<Option<usize>> = known
        .iter()
        .map(|k| have.iter().position(|h| h == k))
        .collect();
    let mut rows = Vec::new();
    let mut first_ok: HashMap<(crate::model::CellKey, u32), u64> = HashMap::new();
    for (line, rec) in records {
        let full: csv::StringRecord = pos
            .iter()
            .map(|p| p.and_then(|p| rec.get(p)).unwrap_or(""))
            .collect();
        let row: ResultRow = full
            .deserialize(Some(&known))
            .map_err(|e| Refused::BadRow {
                path: path.into(),
                line,
                message: stored_csv::deserialize_message(&e, &known),
            })?;
        check_names(&row).map_err(|message| Refused::BadRow {
            path: path.into(),
            line,
            message,
        })?;
        if row.is_ok() {
            let key = (row.cell_key(), row.iteration);
            if let Some(&first) = first_ok.get(&key) {
                return Err(Refused::Duplicate {
                    path: path.into(),
                    line,
                    first,
                    cell: cell_text(&row),
                    iteration: row.iteration,
                });
            }
            first_ok.insert(key, line);
        }
        rows.push(row);
    }
    Ok(Results {
        rows,
        columns: have.iter().map(str::to_string).collect(),
    })
}

/// Every asked-for column must be in the header of the results.csv at `path`.
pub(crate) fn require_columns(
    path: &Path,
    columns: &[String],
    asked: &[&str],
) -> Result<(), Refused> {
    match asked.iter().find(|a| !columns.iter().any(|c| c == *a)) {
        Some(missing) => Err(Refused::MissingColumn {
            path: path.into(),
            column: missing.to_string(),
        }),
        None => Ok(()),
    }
}

/// manifest.json, parsed and with a known `format_version`; `None` when the file is absent
/// (a results.csv copied on its own still reads).
pub(crate) fn read_manifest(path: &Path) -> Result<Option<serde_json::Value>, Refused> {
    let Some(text) = crate::input::file::read_text_optional(path, crate::input::file::MANIFEST)?
    else {
        return Ok(None);
    };
    parse_manifest(path, &text).map(Some)
}

/// A manifest.json's text, parsed and checked as `read_manifest` does; `path` names it in a
/// refusal (a file, or a run in a store).
pub(crate) fn parse_manifest(path: &Path, text: &str) -> Result<serde_json::Value, Refused> {
    let manifest: serde_json::Value =
        serde_json::from_str(text).map_err(|source| Refused::NotJson {
            path: path.into(),
            source,
        })?;
    let version = &manifest["format_version"];
    match version.as_u64() {
        // Format 1 kept the counters in results.csv (`legacy`); both still read.
        Some(v) if (1..=u64::from(FORMAT_VERSION)).contains(&v) => {
            check_identity(path, text, &manifest)?;
            Ok(manifest)
        }
        Some(found) if found > u64::from(FORMAT_VERSION) => Err(Refused::NewerFormat {
            path: path.into(),
            found,
        }),
        _ => Err(Refused::UnknownFormat {
            path: path.into(),
            found: match version {
                serde_json::Value::Null => "(missing)".into(),
                v => format!("`{v}`"),
            },
        }),
    }
}

/// The manifest's identity and times are printed in every report: a run id is a folder
/// name (`--out` may give any), the instance a token of letters and digits, a time RFC 3339
/// (what `rmatrix run` writes); a newline, an escape sequence or an invisible character in
/// them is refused with the line it is on (markup is escaped where they are rendered).
fn check_identity(path: &Path, text: &str, m: &serde_json::Value) -> Result<(), Refused> {
    type Allowed = fn(char) -> bool;
    let folder: Allowed = |c| !c.is_control() && !crate::escape::invisible(c);
    let token: Allowed = |c| c.is_ascii_alphanumeric();
    let time: Allowed = |c| c.is_ascii_digit() || matches!(c, '-' | ':' | 'T' | 'Z' | '+' | '.');
    let fields: [(&str, Allowed, &str); 4] = [
        (
            "run_id",
            folder,
            "a folder name (no control or invisible character, at most 255 bytes)",
        ),
        ("instance", token, "a token of letters and digits"),
        (
            "started_at",
            time,
            "an RFC 3339 time such as 2026-11-29T10:15:00Z",
        ),
        (
            "finished_at",
            time,
            "an RFC 3339 time such as 2026-11-29T10:15:00Z",
        ),
    ];
    for (key, ok, expected) in fields {
        let v = &m[key];
        let good = match v {
            serde_json::Value::Null => true,
            serde_json::Value::String(s) => s.len() <= 255 && s.chars().all(ok),
            _ => false,
        };
        if !good {
            let quoted = format!("\"{key}\"");
            let line = text
                .lines()
                .position(|l| l.contains(&quoted))
                .map_or(1, |i| i as u64 + 1);
            return Err(Refused::BadRow {
                path: path.into(),
                line,
                message: format!(
                    "`{key}` is {}; it must be {expected} (it is printed in every report)",
                    crate::escape::terminal(&v.to_string())
                ),
            });
        }
    }
    Ok(())
}

/// A row's cell is named as a matrix names it (it reaches table headers, file names and
/// every output format): a stored name no matrix could have is refused.
fn check_names(r: &ResultRow) -> Result<(), String> {
    use crate::input::untrusted;
    untrusted::name("server", &r.server)?;
    untrusted::name("config", &r.config)?;
    untrusted::name("workload", &r.workload)?;
    if !r.engine.is_empty() {
        untrusted::sql_identifier("engine", &r.engine)?;
    }
    Ok(())
}

/// The header this version writes.
pub(crate) fn known_columns() -> csv::StringRecord {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(ResultRow::default())
        .expect("invariant: a default row serialises");
    let bytes = w
        .into_inner()
        .expect("invariant: writing to memory does not fail");
    let text = String::from_utf8_lossy(&bytes);
    csv::StringRecord::from(
        text.lines()
            .next()
            .unwrap_or("")
            .split(',')
            .collect::<Vec<_>>(),
    )
}

/// `server/config/engine/workload/cN`, as the plan prints a cell.
fn cell_text(r: &ResultRow) -> String {
    let mut parts = vec![r.server.as_str(), r.config.as_str()];
    if !r.engine.is_empty() {
        parts.push(&r.engine);
    }
    parts.push(&r.workload);
    format!("{}/c{}", parts.join("/"), r.concurrency)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "server,config,engine,workload,kind,concurrency,iteration,status,error,qps\n";

    fn read(body: &str) -> Result<Results, Refused> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        std::fs::write(&path, format!("{HEADER}{body}")).unwrap();
        read_results(&path)
    }

    fn row(iteration: u32, status: &str, qps: &str) -> String {
        format!("s,c,InnoDB,w,slap,2,{iteration},{status},,{qps}\n")
    }

    #[test]
    fn resumed_iterations_read_and_true_duplicates_do_not() {
        // Failed, then retried by --resume: one result per iteration.
        let body = [row(1, "ok", "10"), row(2, "failed", ""), row(2, "ok", "11")].concat();
        let res = read(&body).unwrap();
        assert_eq!(res.rows.len(), 3);
        assert!(res.columns.contains(&"qps".to_string()));
        assert!(!res.columns.contains(&"tps".to_string()));
        let body = [row(1, "ok", "10"), row(2, "ok", "11"), row(2, "ok", "12")].concat();
        match read(&body) {
            Err(Refused::Duplicate { line, first, .. }) => assert_eq!((line, first), (4, 3)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_that_cannot_be_measured_are_refused() {
        for (qps, shown) in [("NaN", "NaN"), ("inf", "inf"), ("-1.5", "-1.5")] {
            let err = read(&[row(1, "ok", "10"), row(2, "ok", qps)].concat()).unwrap_err();
            assert!(
                err.to_string()
                    .ends_with(&format!("results.csv:3: qps is {shown}; a measured value is a finite number, never negative")),
                "{err}"
            );
        }
        assert!(read(&row(1, "ok", "0")).is_ok(), "zero is a value");
        let err = read(&row(1, "done", "1")).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("results.csv:2: unknown status `done`; expected `ok` or `failed`"),
            "{err}"
        );
        let err = read(&row(1, "ok", "fast")).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("results.csv:2: column qps: invalid float literal"),
            "{err}"
        );
    }

    #[test]
    fn manifest_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        assert!(read_manifest(&path).unwrap().is_none(), "absent is fine");
        let cases = [
            (r#"{"format_version": 1}"#, None),
            (r#"{"format_version": 2}"#, None),
            (r#"{"format_version": 1, "run_id": "my run 2"}"#, None),
            (
                r#"{"format_version": 1, "run_id": "x\n# injected"}"#,
                Some("manifest.json:1: `run_id` is \"x\\n# injected\"; it must be a folder name"),
            ),
            (
                r#"{"format_version": 1, "started_at": "\u001b[2J"}"#,
                Some("`started_at` is \"\\u001b[2J\"; it must be an RFC 3339 time"),
            ),
            (
                r#"{"format_version": 1, "instance": "a\u202eb"}"#,
                Some("`instance` is"),
            ),
            (
                r#"{"format_version": 3}"#,
                Some("format_version 3 is newer"),
            ),
            (
                r#"{"format_version": 0}"#,
                Some("format_version `0` is not"),
            ),
            (
                r#"{"format_version": "1"}"#,
                Some("format_version `\"1\"` is not"),
            ),
            (
                r#"{"run_id": "x"}"#,
                Some("format_version (missing) is not"),
            ),
            ("format_version: 1", Some("failed to parse")),
        ];
        for (text, err) in cases {
            std::fs::write(&path, text).unwrap();
            match (read_manifest(&path), err) {
                (Ok(Some(_)), None) => {}
                (Err(e), Some(want)) => assert!(e.to_string().contains(want), "{e}"),
                (got, want) => panic!("{text}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn asked_for_columns_must_exist() {
        let cols = vec!["qps".to_string()];
        assert!(require_columns(Path::new("r.csv"), &cols, &["qps"]).is_ok());
        let err = require_columns(Path::new("r.csv"), &cols, &["qps", "tps"]).unwrap_err();
        assert!(
            err.to_string().starts_with("r.csv has no `tps` column"),
            "{err}"
        );
    }
}
