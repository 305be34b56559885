//! The options a matrix passes to sysbench (`options: {tables: 4}`): checked before they
//! reach its command line.

use std::sync::LazyLock;

use super::process::Db;
use crate::input::untrusted::{config_value, printable};

/// Options rmatrix sets itself on sysbench's command line: where the load goes, as whom,
/// how many clients and for how long, and how progress is read. A matrix option with one
/// of these names would silently override the cell (sysbench takes the last value).
fn managed() -> &'static [String] {
    static MANAGED: LazyLock<Vec<String>> = LazyLock::new(|| {
        let connection = ["host", "port", "socket", "user", "password", "db"];
        let per_driver = Db::all().flat_map(|d| connection.map(|o| format!("{}-{o}", d.name())));
        let cell = [
            "threads",
            "time",
            "events",
            "report-interval",
            "config-file",
        ];
        (std::iter::once("db-driver".to_string()))
            .chain(per_driver)
            .chain(cell.map(String::from))
            .collect()
    });
    &MANAGED
}

/// A sysbench option from a matrix (`--key=value`): a lower-case option name rmatrix does not
/// manage itself, and a one-line scalar value.
pub(crate) fn sysbench_option(key: &str, value: &serde_json::Value) -> Result<(), String> {
    let shaped = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !shaped {
        return Err(format!(
            "sysbench option `{}` is not an option name (lower-case letters, digits, `_`, `-`)",
            printable(key)
        ));
    }
    if managed().contains(&key.replace('_', "-")) {
        return Err(format!(
            "sysbench option `{key}` is set by rmatrix from the cell (server, concurrency, \
             length); options it manages: {}",
            managed().join(", ")
        ));
    }
    match value {
        serde_json::Value::String(s) => config_value(key, s),
        serde_json::Value::Number(n) => sized(key, n),
        serde_json::Value::Bool(_) => Ok(()),
        _ => Err(format!(
            "sysbench option `{key}` takes one value (a number, a word or on/off)"
        )),
    }
}

/// `rand-type: zipfian` exists from sysbench 1.1 (its master branch) on; 1.0.x, Debian's,
/// takes only uniform, gaussian, special and pareto, and a run with it fails at its first
/// event. `version` is the program's `--version` line (`sysbench 1.0.20`), None when it could
/// not be asked (then sysbench itself has the last word).
pub(crate) fn rand_type_known(
    options: &indexmap::IndexMap<String, serde_json::Value>,
    version: impl FnOnce() -> Option<String>,
) -> Result<(), (String, String)> {
    let Some((key, _)) = (options.iter())
        .find(|(k, v)| k.replace('_', "-") == "rand-type" && v.as_str() == Some("zipfian"))
    else {
        return Ok(());
    };
    match version() {
        Some(v) if v.trim_start_matches("sysbench ").starts_with("1.0") => Err((
            key.clone(),
            format!(
                "`{key}: zipfian` needs sysbench 1.1 or later, and the sysbench here is \
                 `{}` (1.0 takes uniform, gaussian, special and pareto): choose another, or \
                 use an `oltp` workload, which draws zipfian as 1.1 does",
                crate::escape::terminal(&v)
            ),
        )),
        _ => Ok(()),
    }
}

/// The sizes of sysbench's schema, bounded as the `oltp` workload bounds them (its other
/// options are sysbench's to check).
const SIZES: [(&str, u64); 2] = [("tables", 10_000), ("table-size", 1_000_000_000)];

fn sized(key: &str, n: &serde_json::Number) -> Result<(), String> {
    let name = key.replace('_', "-");
    let Some(&(_, max)) = SIZES.iter().find(|(k, _)| *k == name) else {
        return Ok(());
    };
    match n.as_u64().filter(|v| (1..=max).contains(v)) {
        Some(_) => Ok(()),
        None => Err(format!("`{key}` is {n}: it must be from 1 to {max}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_options() {
        use serde_json::json;
        assert!(sysbench_option("tables", &json!(4)).is_ok());
        assert!(sysbench_option("skip_trx", &json!(true)).is_ok());
        assert!(sysbench_option("rand-type", &json!("uniform")).is_ok());
        for (k, v) in [
            ("mysql-host", json!("10.0.0.1")),
            ("mysql_host", json!("10.0.0.1")),
            ("pgsql-host", json!("10.0.0.1")),
            ("pgsql_password", json!("x")),
            ("pgsql-db", json!("other")),
            ("mysql-socket", json!("/tmp/s")),
            ("db_driver", json!("pgsql")),
            ("threads", json!(64)),
            ("time", json!(1)),
            ("Tables", json!(4)),
            ("a=b", json!(1)),
            ("tables", json!([1, 2])),
            ("rand-type", json!("x\n--mysql-host=y")),
            ("tables", json!(4_000_000_000u64)),
            ("table_size", json!(0)),
            ("table-size", json!(2.5)),
        ] {
            assert!(sysbench_option(k, &v).is_err(), "{k} {v}");
        }
    }

    #[test]
    fn zipfian_is_refused_for_sysbench_1_0_only() {
        use serde_json::json;
        let with = |k: &str, v| indexmap::IndexMap::from([(k.to_string(), v)]);
        let zipf = with("rand_type", json!("zipfian"));
        fn v(s: &'static str) -> impl FnOnce() -> Option<String> {
            move || Some(s.to_string())
        }
        let (key, msg) = rand_type_known(&zipf, v("sysbench 1.0.20")).unwrap_err();
        assert_eq!(key, "rand_type");
        assert!(msg.contains("`sysbench 1.0.20`"), "{msg}");
        assert!(rand_type_known(&zipf, v("sysbench 1.1.0-2ca9e3f")).is_ok());
        assert!(rand_type_known(&zipf, || None).is_ok());
        let special = with("rand-type", json!("special"));
        assert!(rand_type_known(&special, v("sysbench 1.0.20")).is_ok());
    }
}
