//! Did the variant take effect? Compare each my.cnf setting with the value the running
//! server reports, tolerating the server's own spelling (ON/1, 128M/134217728, dashes).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::servers::spec::{Allocator, CnfValue};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The setting as written in the matrix.
    pub setting: String,
    /// The server variable it was checked against.
    pub variable: String,
    pub expected: String,
    pub actual: Option<String>,
    /// `ok`, `mismatch`, or `unverifiable` (no variable of that name: an option only).
    pub status: &'static str,
}

/// A check read back from JSON (a client container's answer): its status one of the three.
#[derive(Deserialize)]
struct CheckJson {
    setting: String,
    variable: String,
    expected: String,
    actual: Option<String>,
    status: String,
}

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Check, D::Error> {
        let c = CheckJson::deserialize(d)?;
        let status = ["ok", "mismatch", "unverifiable"]
            .into_iter()
            .find(|k| *k == c.status)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("unknown check status {:?}", c.status))
            })?;
        Ok(Check {
            setting: c.setting,
            variable: c.variable,
            expected: c.expected,
            actual: c.actual,
            status,
        })
    }
}

pub fn check_settings(
    settings: &IndexMap<String, Option<CnfValue>>,
    allocator: Option<Allocator>,
    vars: &BTreeMap<String, String>,
) -> Vec<Check> {
    let mut checks: Vec<Check> = settings
        .iter()
        .map(|(k, v)| check_one(k, v.as_ref(), vars))
        .collect();
    if let Some(a) = allocator {
        let actual = vars.get("version_malloc_library").cloned();
        let ok = match a.preload() {
            Some((_, word)) => actual
                .as_deref()
                .is_some_and(|v| v.to_lowercase().contains(word)),
            None => actual.as_deref().is_some_and(|v| {
                let v = v.to_lowercase();
                !v.contains("tcmalloc") && !v.contains("jemalloc")
            }),
        };
        checks.push(Check {
            setting: "allocator".into(),
            variable: "version_malloc_library".into(),
            expected: format!("{a:?}").to_lowercase(),
            status: if ok { "ok" } else { "mismatch" },
            actual,
        });
    }
    checks
}

fn normal_name(name: &str) -> String {
    let n = name.trim().to_lowercase().replace('-', "_");
    n.strip_prefix("loose_").map(str::to_string).unwrap_or(n)
}

fn check_one(setting: &str, value: Option<&CnfValue>, vars: &BTreeMap<String, String>) -> Check {
    let name = normal_name(setting);
    let written = value.map(|v| v.0.clone());
    // `skip_x` / `disable_x` switch variable `x` off, `enable_x` on, unless `skip_x` is itself
    // a variable (skip_name_resolve).
    let (variable, expected) = if vars.contains_key(&name) {
        (name.clone(), written.clone().unwrap_or_else(|| "ON".into()))
    } else if let Some(base) = name
        .strip_prefix("skip_")
        .or_else(|| name.strip_prefix("disable_"))
    {
        let off = written
            .as_deref()
            .map(|w| truthy(w) == Some(true))
            .unwrap_or(true);
        (base.to_string(), if off { "OFF" } else { "ON" }.to_string())
    } else if let Some(base) = name.strip_prefix("enable_") {
        (base.to_string(), "ON".to_string())
    } else {
        (name.clone(), written.clone().unwrap_or_else(|| "ON".into()))
    };
    let actual = vars.get(&variable).cloned();
    let status = match &actual {
        None => "unverifiable",
        Some(a) if same_value(&expected, a) => "ok",
        Some(_) => "mismatch",
    };
    Check {
        setting: setting.to_string(),
        variable,
        expected,
        actual,
        status,
    }
}

fn truthy(v: &str) -> Option<bool> {
    match v.trim().to_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Some(true),
        "off" | "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// `128M` -> 134217728; plain numbers as they are.
fn number(v: &str) -> Option<f64> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 1024f64),
        'M' => (&v[..v.len() - 1], 1024f64.powi(2)),
        'G' => (&v[..v.len() - 1], 1024f64.powi(3)),
        'T' => (&v[..v.len() - 1], 1024f64.powi(4)),
        _ => (v, 1.0),
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

pub fn same_value(expected: &str, actual: &str) -> bool {
    let (e, a) = (expected.trim(), actual.trim());
    if e.eq_ignore_ascii_case(a) {
        return true;
    }
    if let (Some(x), Some(y)) = (truthy(e), truthy(a)) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (number(e), number(a)) {
        return (x - y).abs() <= f64::EPSILON * x.abs().max(1.0);
    }
    // A boolean variable set with a value (`log_bin = mysql-bin`) reports ON.
    if truthy(a) == Some(true) && truthy(e).is_none() && number(e).is_none() {
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_survives_json_and_an_unknown_status_is_refused() {
        let c = Check {
            setting: "log_bin".into(),
            variable: "log_bin".into(),
            expected: "OFF".into(),
            actual: Some("ON".into()),
            status: "mismatch",
        };
        let back: Check = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let bad = serde_json::to_string(&c)
            .unwrap()
            .replace("mismatch", "fine");
        let e = serde_json::from_str::<Check>(&bad).unwrap_err();
        assert!(
            e.to_string().contains("unknown check status \"fine\""),
            "{e}"
        );
    }

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn settings(yaml: &str) -> IndexMap<String, Option<CnfValue>> {
        crate::input::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn server_spellings_are_equal() {
        assert!(same_value("1", "ON"));
        assert!(same_value("off", "0"));
        assert!(same_value("128M", "134217728"));
        assert!(same_value("O_DIRECT", "o_direct"));
        assert!(same_value("mysql-bin", "ON"));
        assert!(!same_value("1", "0"));
        assert!(!same_value("256M", "134217728"));
        assert!(!same_value("pool-of-threads", "one-thread-per-connection"));
    }

    #[test]
    fn checks_settings_against_variables() {
        let v = vars(&[
            ("log_bin", "ON"),
            ("sync_binlog", "0"),
            ("skip_name_resolve", "ON"),
            ("performance_schema", "OFF"),
            ("version_malloc_library", "jemalloc 5.3.0"),
        ]);
        let s = settings("{log-bin: mysql-bin, sync_binlog: 1, skip_name_resolve: ~, skip-performance-schema: ~, loose-foo: 3}");
        let c = check_settings(&s, Some(Allocator::Jemalloc), &v);
        let status: Vec<(&str, &str)> = c.iter().map(|c| (c.variable.as_str(), c.status)).collect();
        assert_eq!(
            status,
            [
                ("log_bin", "ok"),
                ("sync_binlog", "mismatch"),
                ("skip_name_resolve", "ok"),
                ("performance_schema", "ok"),
                ("foo", "unverifiable"),
                ("version_malloc_library", "ok"),
            ]
        );
        let c = check_settings(&IndexMap::new(), Some(Allocator::Tcmalloc), &v);
        assert_eq!(c[0].status, "mismatch");
    }
}
