//! Did the variant take effect? Compare each my.cnf setting with the value the running
//! server reports, tolerating the server's own spelling (ON/1, 128M/134217728, dashes).

use std::collections::BTreeMap;

use indexmap::IndexMap;

use crate::servers::check::{same_value, truthy, Check};
use crate::servers::spec::{Allocator, CnfValue};

pub(crate) fn check_settings(
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

#[cfg(test)]
mod tests {
    use super::*;

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
