//! What a variant's settings are checked against: one `Check` per setting (or allocator)
//! against the value the running server reports, and the spellings every family's servers
//! share (ON/1, 128M/134217728).

use serde::{Deserialize, Serialize};

/// One setting of a variant against what the server reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Check {
    /// The setting as written in the matrix.
    pub(crate) setting: String,
    /// The server variable it was checked against.
    pub(crate) variable: String,
    pub(crate) expected: String,
    pub(crate) actual: Option<String>,
    /// `ok`, `mismatch`, or `unverifiable` (no variable of that name: an option only).
    pub(crate) status: &'static str,
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

pub(crate) fn truthy(v: &str) -> Option<bool> {
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

pub(crate) fn same_value(expected: &str, actual: &str) -> bool {
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
}
