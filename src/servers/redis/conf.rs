//! redis.conf: the check of each setting's name, rendering a config's `redis_conf` settings,
//! and checking each against what `CONFIG GET *` reports (Redis spells `100mb` as 104857600
//! and booleans as yes/no).

use std::collections::BTreeMap;

use crate::input::untrusted::printable;
use crate::servers::check::{same_value, Check};
use crate::servers::spec::{Allocator, CnfValue, Settings};

/// redis.conf directives rmatrix will not write: they load code or files, rename commands,
/// or change the password rmatrix generated and uses.
const REDIS_REFUSED: [&str; 4] = ["include", "loadmodule", "rename-command", "requirepass"];

/// A redis.conf directive name: lower-case letters, digits and `-` (Redis's own names).
pub(crate) fn redis_key(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        return Err(format!(
            "redis.conf directive `{}` is not a directive name (lower-case letters, digits, \
             `-`): it would be written into the server's config file",
            printable(name)
        ));
    }
    if REDIS_REFUSED.contains(&name) {
        return Err(format!(
            "redis.conf directive `{name}` is refused: it loads code or files, renames commands \
             or replaces the password rmatrix generates ({} are never written)",
            REDIS_REFUSED.join(", ")
        ));
    }
    Ok(())
}

/// One `name value` line per setting; YAML booleans become yes/no, an empty value `""`.
pub(crate) fn render(settings: &Settings) -> String {
    let mut out = String::from("# rendered by rmatrix\n");
    for (name, v) in settings {
        out.push_str(&format!("{name} {}\n", conf_value(text(v))));
    }
    out
}

/// A setting's text: the block takes no bare flags, so every setting has one.
fn text(v: &Option<CnfValue>) -> &str {
    v.as_ref().map_or("", |CnfValue(v)| v.as_str())
}

fn conf_value(v: &str) -> String {
    match v {
        "ON" => "yes".into(),
        "OFF" => "no".into(),
        "" => "\"\"".into(),
        v => v.to_string(),
    }
}

/// Compare every setting with the server's value; the allocator with INFO `mem_allocator`.
pub(crate) fn check_settings(
    settings: &Settings,
    allocator: Option<Allocator>,
    vars: &BTreeMap<String, String>,
) -> Vec<Check> {
    let mut checks: Vec<Check> = settings
        .iter()
        .map(|(name, v)| {
            let variable = name.trim().to_lowercase();
            let expected = conf_value(text(v)).trim_matches('"').to_string();
            let actual = vars.get(&variable).cloned();
            let status = match &actual {
                None => "unverifiable",
                Some(a) if redis_same(&expected, a) => "ok",
                Some(_) => "mismatch",
            };
            Check {
                setting: name.clone(),
                variable,
                expected,
                actual,
                status,
            }
        })
        .collect();
    if let Some(a) = allocator {
        let word = match a {
            Allocator::System => "libc",
            Allocator::Tcmalloc => "tcmalloc",
            Allocator::Jemalloc => "jemalloc",
        };
        let actual = vars.get("mem_allocator").cloned();
        let ok = actual.as_deref().is_some_and(|v| v.contains(word));
        checks.push(Check {
            setting: "allocator".into(),
            variable: "mem_allocator".into(),
            expected: word.into(),
            status: if ok { "ok" } else { "mismatch" },
            actual,
        });
    }
    checks
}

/// Redis's own spellings: memory units (`1kb` = 1024, `1k` = 1000), collapsed whitespace.
pub(crate) fn redis_same(expected: &str, actual: &str) -> bool {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (e, a) = (words(expected), words(actual));
    if e.eq_ignore_ascii_case(&a) {
        return true;
    }
    match (memory(&e), memory(&a)) {
        (Some(x), Some(y)) => x == y,
        _ => same_value(&e, &a),
    }
}

fn memory(v: &str) -> Option<u64> {
    let v = v.trim().to_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    Some(n * mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(yaml: &str) -> Settings {
        crate::input::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn directive_names() {
        for ok in ["appendonly", "io-threads", "maxmemory-policy", "save"] {
            assert!(redis_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "rename-command",
            "requirepass",
            "include",
            "loadmodule",
            "Save",
            "a\nb",
        ] {
            assert!(redis_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn renders_redis_conf() {
        let s = settings("{appendonly: true, appendfsync: always, save: '', maxmemory: 100mb}");
        assert_eq!(
            render(&s),
            "# rendered by rmatrix\nappendonly yes\nappendfsync always\nsave \"\"\nmaxmemory 100mb\n"
        );
    }

    #[test]
    fn checks_against_config_get() {
        let vars: BTreeMap<String, String> = [
            ("appendonly", "yes"),
            ("appendfsync", "everysec"),
            ("save", ""),
            ("maxmemory", "104857600"),
            ("io-threads", "1"),
            ("mem_allocator", "jemalloc-5.3.0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = settings(
            "{appendonly: true, appendfsync: always, save: '', maxmemory: 100mb, io-threads: 4, rename-command: x}",
        );
        let status: Vec<&str> = check_settings(&s, Some(Allocator::Jemalloc), &vars)
            .iter()
            .map(|c| c.status)
            .collect();
        assert_eq!(
            status,
            [
                "ok",
                "mismatch",
                "ok",
                "ok",
                "mismatch",
                "unverifiable",
                "ok"
            ]
        );
        assert!(redis_same("3600 1  300 100", "3600 1 300 100"));
        assert!(!redis_same("1k", "1024"));
        assert!(redis_same("1kb", "1024"));
    }
}
