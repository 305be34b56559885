//! Did the variant take effect? Each postgresql.conf setting against `pg_settings`: the
//! value in the parameter's own unit (`shared_buffers: 256MB` is 32768 of 8kB), a setting
//! that waits for a restart (`pending_restart`) is one that did not take.

use std::collections::BTreeMap;

use crate::servers::check::{same_value, Check};
use crate::servers::spec::{CnfValue, Settings};

/// One row of `pg_settings`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    pub(crate) value: String,
    pub(crate) unit: Option<String>,
    pub(crate) pending_restart: bool,
}

impl Setting {
    /// As variables.json shows it: the value and its unit (`32768 8kB`).
    pub(crate) fn shown(&self) -> String {
        match &self.unit {
            Some(u) => format!("{} {u}", self.value),
            None => self.value.clone(),
        }
    }
}

pub(crate) fn check_settings(
    settings: &Settings,
    server: &BTreeMap<String, Setting>,
) -> Vec<Check> {
    settings
        .iter()
        .map(|(name, value)| {
            let variable = name.to_ascii_lowercase();
            let expected = value
                .as_ref()
                .map(|CnfValue(v)| v.clone())
                .unwrap_or_default();
            let (actual, status) = match server.get(&variable) {
                None => (None, "unverifiable"),
                Some(s) if s.pending_restart => {
                    (Some(format!("{} (pending restart)", s.shown())), "mismatch")
                }
                Some(s) if same_setting(&expected, s) => (Some(s.shown()), "ok"),
                Some(s) => (Some(s.shown()), "mismatch"),
            };
            Check {
                setting: name.clone(),
                variable,
                expected,
                actual,
                status,
            }
        })
        .collect()
}

/// The expected value as the server would store it: a number with a unit in the
/// parameter's unit, anything else by the spellings every family shares.
fn same_setting(expected: &str, s: &Setting) -> bool {
    if same_value(expected, &s.value) {
        return true;
    }
    let (Some(unit), Ok(actual)) = (&s.unit, s.value.trim().parse::<f64>()) else {
        return false;
    };
    let Some((unit_n, unit_base)) = quantity(unit) else {
        return false;
    };
    let Some((n, base)) = quantity(expected) else {
        return false;
    };
    if base != unit_base {
        return false;
    }
    // The server rounds to its unit (a 100kB shared_buffers is 12 pages of 8kB).
    let want = n / unit_n;
    (want - actual).abs() < 1.0
}

/// `256MB` -> (268435456, "B"), `5min` -> (300000, "ms"), `8kB` -> (8192, "B"); None for
/// a plain number or anything else.
fn quantity(v: &str) -> Option<(f64, &'static str)> {
    let v = v.trim();
    let split = v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))?;
    let (num, unit) = v.split_at(split);
    let num: f64 = if num.is_empty() {
        1.0
    } else {
        num.parse().ok()?
    };
    let (mult, base) = match unit.trim() {
        "B" => (1.0, "B"),
        "kB" => (1024.0, "B"),
        "MB" => (1024f64.powi(2), "B"),
        "GB" => (1024f64.powi(3), "B"),
        "TB" => (1024f64.powi(4), "B"),
        "us" => (0.001, "ms"),
        "ms" => (1.0, "ms"),
        "s" => (1000.0, "ms"),
        "min" => (60_000.0, "ms"),
        "h" => (3_600_000.0, "ms"),
        "d" => (86_400_000.0, "ms"),
        _ => return None,
    };
    Some((num * mult, base))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(rows: &[(&str, &str, Option<&str>, bool)]) -> BTreeMap<String, Setting> {
        rows.iter()
            .map(|(n, v, u, p)| {
                (
                    n.to_string(),
                    Setting {
                        value: v.to_string(),
                        unit: u.map(str::to_string),
                        pending_restart: *p,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn values_are_compared_in_the_parameters_unit() {
        let s = server(&[
            ("shared_buffers", "32768", Some("8kB"), false),
            ("synchronous_commit", "off", None, false),
            ("fsync", "on", None, false),
            ("checkpoint_timeout", "300", Some("s"), false),
            ("work_mem", "4096", Some("kB"), false),
            ("max_connections", "100", None, true),
        ]);
        let settings: Settings = crate::input::yaml::from_str(
            "{shared_buffers: 256MB, synchronous_commit: false, fsync: off, \
             checkpoint_timeout: 5min, work_mem: 8MB, max_connections: 200, foo.bar: 1}",
        )
        .unwrap();
        let checks = check_settings(&settings, &s);
        let got: Vec<(&str, &str)> = checks
            .iter()
            .map(|c| (c.setting.as_str(), c.status))
            .collect();
        assert_eq!(
            got,
            [
                ("shared_buffers", "ok"),
                ("synchronous_commit", "ok"),
                ("fsync", "mismatch"),
                ("checkpoint_timeout", "ok"),
                ("work_mem", "mismatch"),
                ("max_connections", "mismatch"),
                ("foo.bar", "unverifiable"),
            ]
        );
        let c = &check_settings(&settings, &s)[5];
        assert_eq!(c.actual.as_deref(), Some("100 (pending restart)"));
        assert!(same_setting("32768", &s["shared_buffers"]));
        assert!(!same_setting("128MB", &s["shared_buffers"]));
    }
}
