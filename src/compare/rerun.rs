//! Measure again what a comparison flagged: the `--only` selections that keep the cells
//! with a regressed change (`rmatrix run --only-regressed COMPARE.json`, the nightly job's
//! confirmation run; `rmatrix bisect`'s steps).

use indexmap::IndexMap;

use crate::error::UsageError;

/// `KEY=V1,V2` selections that keep every cell of `cells` (each its dimensions): the values
/// each dimension has among them. A dimension the cells do not have (empty) is left out.
pub(crate) fn only_args<'a>(
    cells: impl Iterator<Item = &'a IndexMap<String, String>>,
) -> Vec<String> {
    let mut values: IndexMap<String, Vec<String>> = IndexMap::new();
    for dims in cells {
        for (k, v) in dims.iter().filter(|(_, v)| !v.is_empty()) {
            let e = values.entry(k.clone()).or_default();
            if !e.contains(v) {
                e.push(v.clone());
            }
        }
    }
    values
        .into_iter()
        .map(|(k, v)| format!("{k}={}", v.join(",")))
        .collect()
}

/// The selections of the regressed cells in `compare --format json`'s output (one or more
/// comparisons). The values are checked against the matrix by `--only`'s own parser.
pub(crate) fn regressed_only(json: &str) -> Result<Vec<String>, UsageError> {
    let bad = |why: &str| UsageError(format!("--only-regressed: {why}"));
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        bad(&format!(
            "not the JSON of `rmatrix compare --format json`: {e}"
        ))
    })?;
    let comparisons = match &v {
        serde_json::Value::Array(a) => a.iter().collect::<Vec<_>>(),
        other => vec![other],
    };
    let mut cells: Vec<IndexMap<String, String>> = Vec::new();
    for c in comparisons {
        let changes = c
            .get("changes")
            .and_then(|c| c.as_array())
            .ok_or_else(|| bad("a comparison without `changes`"))?;
        for ch in changes {
            if ch.get("verdict").and_then(|v| v.as_str()) != Some("regressed") {
                continue;
            }
            let dims = ch
                .get("dims")
                .and_then(|d| d.as_object())
                .ok_or_else(|| bad("a change without `dims`"))?;
            let dims: IndexMap<String, String> = dims
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
                    serde_json::Value::Number(n) => Ok((k.clone(), n.to_string())),
                    _ => Err(bad("a dimension that is not a string or number")),
                })
                .collect::<Result<_, _>>()?;
            cells.push(dims);
        }
    }
    if cells.is_empty() {
        return Err(bad("the comparison flagged no regressed cell"));
    }
    Ok(only_args(cells.iter()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_regressed_cells_are_selected_by_their_dimensions() {
        let json = r#"[{"changes": [
            {"verdict": "regressed", "dims": {"server": "a", "config": "c", "engine": "", "concurrency": "4"}},
            {"verdict": "unchanged", "dims": {"server": "b", "config": "c", "engine": "", "concurrency": "8"}},
            {"verdict": "regressed", "dims": {"server": "a", "config": "d", "engine": "", "concurrency": "4"}}
        ]}]"#;
        assert_eq!(
            regressed_only(json).unwrap(),
            // serde_json's objects are read in key order.
            ["concurrency=4", "config=c,d", "server=a"]
        );
        let none = r#"{"changes": [{"verdict": "unchanged", "dims": {}}]}"#;
        assert!(regressed_only(none)
            .unwrap_err()
            .0
            .contains("no regressed cell"));
        assert!(regressed_only("{").is_err());
        assert!(
            regressed_only(r#"{"changes": [{"verdict": "regressed", "dims": {"a": []}}]}"#)
                .is_err()
        );
    }
}
