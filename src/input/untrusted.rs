//! What a matrix says reaches config files and SQL: matrices are pasted from blog posts and
//! pointed at `external:` servers, so every name and value that is rendered into a config
//! file or a statement is checked here first, and refused with the reason (the names a
//! family's config file takes are checked by the family: `ConfigBlock::check_key`).
//! Checked values are safe to render as they are; nothing downstream escapes them again.

/// A SQL identifier rmatrix puts in a statement (engine, database name): letters, digits and
/// `_`, not starting with a digit, at most 64 characters (the SQL servers' limit).
pub(crate) fn sql_identifier(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} `{}` is not a plain SQL identifier (letters, digits and `_`, not starting \
             with a digit, at most 64 characters): it would be written into SQL",
            printable(name)
        ))
    }
}

/// A name on a matrix axis (server, config, workload) or of the matrix: it becomes part of
/// container names, folder names, CSV values and table headers, so it is kept to
/// `[A-Za-z0-9][A-Za-z0-9._-]*` (at most 64): no separators, no markup, no control characters,
/// nothing a spreadsheet reads as a formula, and no two names that collide once made safe.
pub(crate) fn name(what: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} name `{}` must be letters, digits, `.`, `_` and `-`, starting with a letter \
             or digit, at most 64 characters: it names containers, folders and table columns",
            printable(name)
        ))
    }
}

/// A config value: one line of printable text (no newline or other control character, which
/// would start a new directive or section).
pub(crate) fn config_value(key: &str, value: &str) -> Result<(), String> {
    if unprintable(value).is_some() {
        return Err(format!(
            "the value of `{key}` contains a newline or another control character ({}): a \
             value must be one line, or it would add directives to the config file",
            printable(value)
        ));
    }
    Ok(())
}

/// The first character that keeps `value` from being one line of visible text: a newline or
/// another control character, or an invisible one (a zero width, a bidirectional override).
pub(crate) fn unprintable(value: &str) -> Option<char> {
    value
        .chars()
        .find(|&c| c.is_control() || crate::escape::invisible(c))
}

/// The most characters a description may have (`description`).
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 4096;

/// The matrix's description, printed under the title of every summary: text, on several lines
/// if need be, without control or invisible characters (a right-to-left override would show
/// it reversed, a zero-width space hide a word's difference), at most 4096 characters.
pub(crate) fn description(text: &str) -> Result<(), String> {
    let bad = text
        .chars()
        .find(|&c| (c.is_control() && c != '\n') || crate::escape::invisible(c));
    if let Some(c) = bad {
        return Err(format!(
            "the description holds a control or invisible character ({}): it is printed in \
             every summary, where it would show other text than it holds",
            c.escape_unicode()
        ));
    }
    let max = MAX_DESCRIPTION_CHARS;
    if text.chars().count() > max {
        return Err(format!("the description is longer than {max} characters"));
    }
    Ok(())
}

/// A container environment variable's name: a shell-style name (Docker joins `NAME=value`,
/// so an `=` or newline would set another variable), and nothing that looks like a secret,
/// because the matrix is copied into every run directory and shared with the results.
pub(crate) fn env_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let shaped = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !shaped {
        return Err(format!(
            "environment variable `{}` is not a variable name (letters, digits and `_`, not \
             starting with a digit)",
            printable(name)
        ));
    }
    let upper = name.to_ascii_uppercase();
    if [
        "PASSWORD",
        "PASSWD",
        "SECRET",
        "TOKEN",
        "CREDENTIAL",
        "PRIVATE",
    ]
    .iter()
    .any(|s| upper.contains(s))
    {
        return Err(format!(
            "environment variable `{name}` looks like a secret, and a matrix is copied into \
             every run directory: rmatrix gives each server it starts a random password of \
             its own, and an `external:` server's password comes from `password_env`"
        ));
    }
    Ok(())
}

/// `external.password_env`: the variable whose value rmatrix sends as the password to the
/// host the matrix names (Redis's AUTH sends it as it is). So it must be a password's
/// variable by its name (`PASSWORD`, `PASSWD`, or ending `_PW`): a matrix pasted from a blog
/// post cannot send another secret of this shell (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`)
/// to a server of its choosing.
pub(crate) fn password_env(name: &str) -> Result<(), String> {
    let upper = name.to_ascii_uppercase();
    let shaped = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let a_password =
        upper.contains("PASSWORD") || upper.contains("PASSWD") || upper.ends_with("_PW");
    if shaped && a_password {
        return Ok(());
    }
    Err(format!(
        "password_env `{}` must name a password's variable (its name holds PASSWORD or \
         PASSWD, or ends with _PW, e.g. BENCH_PASSWORD): rmatrix sends its value to the \
         server the matrix names, which must not get another secret of your shell",
        printable(name)
    ))
}

/// A CPU list as Docker's `--cpuset-cpus` takes it: `1`, `0-3`, `0,2`; CPUs 0 to 1023.
pub(crate) fn cpuset(list: &str) -> Result<(), String> {
    cpus_of(list).map(|_| ())
}

/// The CPUs of a CPU list (`cpuset`), in order, each once.
pub(crate) fn cpus_of(list: &str) -> Result<Vec<u32>, String> {
    let bad = || {
        format!(
            "cpuset `{}` is not a CPU list such as `1`, `0-1` or `0,2` (CPUs 0 to 1023)",
            crate::escape::terminal(list)
        )
    };
    if list.is_empty() || list.len() > 64 {
        return Err(bad());
    }
    let cpu = |t: &str| {
        (!t.is_empty() && t.len() <= 4 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u32>().ok())
            .flatten()
            .filter(|c| *c <= 1023)
    };
    let mut cpus = std::collections::BTreeSet::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => match (cpu(a), cpu(b)) {
                (Some(a), Some(b)) if a <= b => cpus.extend(a..=b),
                _ => return Err(bad()),
            },
            None => {
                cpus.insert(cpu(part).ok_or_else(bad)?);
            }
        }
    }
    Ok(cpus.into_iter().collect())
}

/// A CPU quota as Docker's `--cpus` takes it: a finite number of CPUs from 0.01 (the
/// engine's smallest quota, 1 ms of each 100 ms period) to 1024 (the engine may be another
/// host, whose CPU count the matrix check does not know; the engine refuses more than it has).
pub(crate) const CPUS: std::ops::RangeInclusive<f64> = 0.01..=1024.0;

/// `n` as a CPU quota (`CPUS`).
pub(crate) fn cpus(n: f64) -> Result<(), String> {
    if n.is_finite() && CPUS.contains(&n) {
        return Ok(());
    }
    Err(format!(
        "cpus `{n}` is not a CPU quota: a number of CPUs from 0.01 to 1024, such as `0.9` or `2`"
    ))
}

/// A memory limit as Docker's `--memory` takes it: a whole number with an optional unit `b`,
/// `k`, `m` or `g` (powers of 1024), from 6m (the engine's smallest) to 1024g; its bytes.
pub(crate) fn memory(text: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "memory `{}` is not a memory limit such as `512m` or `2g` (units b, k, m, g; from 6m \
             to 1024g)",
            crate::escape::terminal(text)
        )
    };
    let t = text.trim().to_ascii_lowercase();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t.as_str(), "b"),
    };
    let scale: u64 = match unit {
        "b" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return Err(bad()),
    };
    let n: u64 = (!digits.is_empty() && digits.len() <= 13)
        .then(|| digits.parse().ok())
        .flatten()
        .ok_or_else(bad)?;
    n.checked_mul(scale)
        .filter(|b| ((6 << 20)..=(1 << 40)).contains(b))
        .ok_or_else(bad)
}

pub(crate) fn build_arg_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let shaped = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if shaped {
        Ok(())
    } else {
        Err(format!(
            "build argument `{}` is not an argument name (letters, digits and `_`, not \
             starting with a digit)",
            printable(name)
        ))
    }
}

/// A Docker build argument's value: one word, because a Dockerfile expands it in `FROM` and
/// in `RUN` shell commands. Letters, digits and `.`, `_`, `-`, `+`, `:`, `~`, `=` (Debian
/// suites, package names and versions), not starting with `-`, at most 128 characters.
pub(crate) fn build_arg_value(name: &str, value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= 128
        && !value.starts_with('-')
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | ':' | '~' | '=')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the value of build argument `{name}` (`{}`) must be one word of letters, digits, \
             `.`, `_`, `-`, `+`, `:`, `~` and `=`, not starting with `-`, at most 128 \
             characters: the Dockerfile expands it in shell commands",
            printable(value)
        ))
    }
}

/// A Docker image reference, `[host[:port]/]path[:tag][@digest]` as the engine reads it
/// (`server:11.4`, `org/server:8.0`, `localhost:5000/x@sha256:...`): a lower-case
/// name of at most 255 characters, so that nothing else (an option such as `--help`, a space,
/// an escape sequence) reaches the engine or a message as an image.
pub(crate) fn image_reference(reference: &str) -> Result<(), String> {
    if image_ok(reference) {
        return Ok(());
    }
    let shown: String = printable(reference).chars().take(80).collect();
    Err(format!(
        "image `{shown}` is not an image reference: `name[:tag][@digest]` such as \
         `server:11.4` or `org/server:8.0`, a lower-case name of at most 255 characters"
    ))
}

fn image_ok(reference: &str) -> bool {
    let word = |t: &str, extra: &[char]| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
    };
    let (rest, digest) = match reference.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (reference, None),
    };
    let digest_ok = digest.is_none_or(|d| match d.split_once(':') {
        Some((algo, hex)) => {
            word(algo, &['+', '.', '_', '-'])
                && hex.len() >= 32
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        }
        None => false,
    });
    // A tag follows the last `:` after the last `/` (a `:` before it is a registry's port).
    let (name, tag) = match rest.rfind(':').filter(|&i| !rest[i..].contains('/')) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let tag_ok = tag
        .is_none_or(|t| t.len() <= 128 && word(t, &['_', '.', '-']) && !t.starts_with(['.', '-']));
    let mut parts: Vec<&str> = name.split('/').collect();
    // A first part with a `.` or `:`, or `localhost`, is the registry: `host[:port]`.
    if parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost") {
        let host = parts.remove(0);
        let (h, port) = host.split_once(':').unwrap_or((host, "1"));
        let host_ok = h
            .split('.')
            .all(|l| word(l, &['-']) && !l.starts_with('-') && !l.ends_with('-'));
        if !host_ok || !word(port, &[]) || !port.chars().all(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    let path_ok = parts.iter().all(|p| {
        word(p, &['.', '_', '-'])
            && !p.starts_with(['.', '_', '-'])
            && !p.ends_with(['.', '_', '-'])
            && !p.chars().any(|c| c.is_ascii_uppercase())
    });
    name.len() <= 255 && digest_ok && tag_ok && path_ok
}

/// `text` with control characters shown as escapes, for an error message on a terminal.
pub(crate) fn printable(text: &str) -> String {
    crate::escape::terminal(text)
}

/// A counter is named as MariaDB, MySQL (`Com_insert`) or Redis (`cmdstat_client|list`,
/// `cmdstat_set.usec`) name theirs; anything else in a stored file is refused before it
/// reaches a terminal or a JSON export.
pub(crate) fn counter_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '|' | '-' | ':'));
    match ok {
        true => Ok(()),
        false => Err(format!(
            "counter name `{}` must be letters, digits, `_`, `.`, `|`, `-` and `:`, at most \
             128 characters (as servers name their counters)",
            printable(name)
        )),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn memory_limits_in_dockers_units_within_bounds() {
        assert_eq!(memory("512m"), Ok(512 << 20));
        assert_eq!(memory("2G"), Ok(2 << 30));
        assert_eq!(memory("6291456"), Ok(6 << 20));
        for bad in [
            "",
            "5m",
            "1025g",
            "12x",
            "-1g",
            "1.5g",
            "m",
            "99999999999999g",
        ] {
            assert!(memory(bad).is_err(), "{bad}");
        }
    }

    use super::*;

    #[test]
    fn sql_identifiers() {
        for ok in ["InnoDB", "MyISAM", "sbtest", "Aria", "my_db1"] {
            assert!(sql_identifier("engine", ok).is_ok(), "{ok}");
        }
        for bad in [
            "MyISAM; DROP DATABASE mysql; --",
            "InnoDB */ DROP TABLE x; /*",
            "sb`test",
            "",
            "1db",
            "a b",
            "ü",
            &"x".repeat(65),
        ] {
            assert!(sql_identifier("engine", bad).is_err(), "{bad}");
        }
        assert_eq!(
            sql_identifier("engine", "a\nb").unwrap_err(),
            "engine `a\\nb` is not a plain SQL identifier (letters, digits and `_`, not \
             starting with a digit, at most 64 characters): it would be written into SQL"
        );
    }

    #[test]
    fn names() {
        for ok in ["mariadb-10.11", "binlog-off", "write_guid", "a", "11.8"] {
            assert!(name("server", ok).is_ok(), "{ok}");
        }
        for bad in [
            "a/b",
            "a b",
            "ü",
            "=HYPERLINK(1)",
            "-x",
            "a|b",
            "<b>",
            "a\nb",
            "",
        ] {
            assert!(name("server", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn image_references() {
        for ok in [
            "mariadb:11.4",
            "mariadb",
            "mysql/mysql-server:8.0",
            "localhost:5000/rmatrix/mariadb:x1",
            "127.0.0.1:5000/redis:7",
            "registry.example.com/a/b_c-d.e:v1.2_3",
            "redis@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(image_reference(ok).is_ok(), "{ok}");
        }
        let long = "x".repeat(10_000);
        for bad in [
            "",
            "--help",
            "mariadb 11",
            "Mariadb:11",
            "mariadb:",
            "mariadb:-x",
            "\u{1b}[31mredis",
            "redis\u{200b}:7",
            "a//b",
            "redis@sha256:xyz",
            "host:port/x",
            long.as_str(),
        ] {
            assert!(image_reference(bad).is_err(), "{bad:?}");
        }
        let e = image_reference(&long).unwrap_err();
        assert!(e.len() < 300, "the message quotes a bounded part: {e}");
    }

    #[test]
    fn config_keys_and_values() {
        assert!(config_value("save", "900 1").is_ok());
        assert!(config_value("x", "1\n[section]\nmalloc-lib=/tmp/x.so").is_err());
        assert!(config_value("x", "1\r").is_err());
        assert!(config_value("x", "\u{1b}[31m").is_err());
    }

    #[test]
    fn build_args() {
        for ok in ["suite", "package", "_x1", "DEBIAN_SUITE"] {
            assert!(build_arg_name(ok).is_ok(), "{ok}");
        }
        for bad in ["1a", "a-b", "a b", "a=b", "", "a\nb"] {
            assert!(build_arg_name(bad).is_err(), "{bad:?}");
        }
        for ok in [
            "trixie",
            "valkey-server",
            "libstdc++6",
            "1:10.11.6-0+deb12u1",
            "x=1~2",
        ] {
            assert!(build_arg_value("v", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "x; rm -rf /",
            "$(id)",
            "`id`",
            "a\nb",
            "'a'",
            "\"a\"",
            "-o",
            "a/b",
            &"x".repeat(129),
        ] {
            assert!(build_arg_value("v", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn password_variables() {
        for ok in ["BENCH_PASSWORD", "BENCH_PW", "db_passwd", "EXT_TEST_PW"] {
            assert!(password_env(ok).is_ok(), "{ok}");
        }
        for bad in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "HOME",
            "PW",
            "A-PASSWORD",
            "",
        ] {
            assert!(password_env(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn env_names() {
        for ok in ["LD_PRELOAD", "MALLOC_CONF", "_x1"] {
            assert!(env_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "A=B",
            "A\nB",
            "1A",
            "",
            "MARIADB_ROOT_PASSWORD",
            "api_token",
            "MY_SECRET",
        ] {
            assert!(env_name(bad).is_err(), "{bad:?}");
        }
    }
}
