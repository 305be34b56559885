//! Rendering a config's postgresql.conf settings into the file the server includes, the
//! check of each setting's name before it is written there, and the settings refused
//! outright: those that run a shell command or load a library from a matrix (matrices are
//! pasted from blog posts), and those rmatrix itself sets.

use crate::input::untrusted::printable;
use crate::servers::spec::{CnfValue, Settings};

/// Settings whose value the server runs as a shell command.
const RUNS_COMMANDS: &[&str] = &[
    "archive_command",
    "archive_cleanup_command",
    "restore_command",
    "recovery_end_command",
    "ssl_passphrase_command",
];

/// Settings that load code or read files from a path the matrix would choose, or that
/// rmatrix sets itself (where the server listens, where its files are).
const NOT_FROM_A_MATRIX: &[&str] = &[
    "archive_library",
    "dynamic_library_path",
    // The JIT provider is a library the server loads by that name.
    "jit_provider",
    "local_preload_libraries",
    "session_preload_libraries",
    "config_file",
    "hba_file",
    "ident_file",
    "data_directory",
    "external_pid_file",
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "unix_socket_group",
    "unix_socket_permissions",
];

/// The libraries `shared_preload_libraries` may name: PostgreSQL's own contrib modules
/// that measure or warm a server.
pub(crate) const PRELOADS_ALLOWED: &[&str] = &["pg_stat_statements", "auto_explain", "pg_prewarm"];

/// `name = 'value'` per setting, the value quoted as postgresql.conf quotes strings.
pub(crate) fn render(settings: &Settings) -> String {
    let mut out = String::from("# rendered by rmatrix\n");
    for (name, value) in settings {
        let v = value.as_ref().map(|CnfValue(v)| v.as_str()).unwrap_or("");
        out.push_str(&format!("{name} = '{}'\n", quote(v)));
    }
    out
}

/// A value inside single quotes: a quote doubled, a backslash escaped.
fn quote(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\'', "''")
}

/// A postgresql.conf parameter name: `[a-z0-9_.]+` (a dot for an extension's own
/// parameter), no include directive, none of the settings refused above.
pub(crate) fn postgres_key(name: &str) -> Result<(), String> {
    let lower = name.to_ascii_lowercase();
    let shaped = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
    if !shaped {
        return Err(format!(
            "postgresql.conf parameter `{}` is not a parameter name (letters, digits, `_`, \
             `.`): it would be written into the server's config file",
            printable(name)
        ));
    }
    if lower.starts_with("include") {
        return Err(format!(
            "`{name}` is an include directive: a config names its settings, not files to read"
        ));
    }
    if RUNS_COMMANDS.contains(&lower.as_str()) {
        return Err(format!(
            "`{name}` runs a shell command on the server's host: rmatrix does not take one \
             from a matrix"
        ));
    }
    if NOT_FROM_A_MATRIX.contains(&lower.as_str()) {
        return Err(format!(
            "`{name}` is not taken from a matrix: it loads code or names a path, or rmatrix \
             sets it itself"
        ));
    }
    Ok(())
}

/// The first library of a `shared_preload_libraries` value outside `PRELOADS_ALLOWED`.
pub(crate) fn refused_preload(value: &str) -> Option<String> {
    value
        .split(',')
        .map(|l| l.trim().trim_matches('"'))
        .filter(|l| !l.is_empty())
        .find(|l| !PRELOADS_ALLOWED.contains(l))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_value_quoted() {
        let settings: Settings = crate::input::yaml::from_str(
            "{synchronous_commit: false, shared_buffers: 256MB, search_path: \"'$user', a\\\\b\"}",
        )
        .unwrap();
        assert_eq!(
            render(&settings),
            "# rendered by rmatrix\nsynchronous_commit = 'OFF'\nshared_buffers = '256MB'\n\
             search_path = '''$user'', a\\\\b'\n"
        );
    }

    #[test]
    fn parameter_names() {
        for ok in [
            "fsync",
            "shared_buffers",
            "auto_explain.log_min_duration",
            "wal_level",
        ] {
            assert!(postgres_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "include",
            "include_if_exists",
            "include_dir",
            "archive_command",
            "ARCHIVE_COMMAND",
            "restore_command",
            "ssl_passphrase_command",
            "dynamic_library_path",
            "port",
            "a b",
            "a\nfsync",
            "a-b",
            "",
        ] {
            assert!(postgres_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn preloads_outside_the_list_are_refused() {
        assert_eq!(refused_preload("pg_stat_statements, auto_explain"), None);
        assert_eq!(refused_preload("\"pg_prewarm\""), None);
        assert_eq!(
            refused_preload("pg_stat_statements,/tmp/evil"),
            Some("/tmp/evil".into())
        );
    }
}
