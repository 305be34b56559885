//! Rendering a config's my.cnf settings into the file the server reads, and the check of
//! each setting's name before it is written there.

use crate::input::untrusted::printable;
use crate::servers::spec::{CnfValue, Settings};

/// `[mysqld]` section with one `name = value` line per setting (a bare name for flags).
pub(crate) fn render(settings: &Settings) -> String {
    let mut out = String::from("# rendered by rmatrix\n[mysqld]\n");
    for (name, value) in settings {
        match value {
            Some(CnfValue(v)) => out.push_str(&format!("{name} = {v}\n")),
            None => out.push_str(&format!("{name}\n")),
        }
    }
    out
}

/// A my.cnf option name: `[A-Za-z0-9_.-]+` (no `!include`, no `[section]`, no newline).
pub(crate) fn mycnf_key(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "my.cnf option `{}` is not an option name (letters, digits, `_`, `.`, `-`): it \
             would be written into the server's config file",
            printable(name)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_values_and_flags() {
        let settings: Settings = crate::input::yaml::from_str(
            "{log_bin: mysql-bin, sync_binlog: 1, skip_name_resolve: ~, innodb_doublewrite: false}",
        )
        .unwrap();
        assert_eq!(
            render(&settings),
            "# rendered by rmatrix\n[mysqld]\nlog_bin = mysql-bin\nsync_binlog = 1\nskip_name_resolve\ninnodb_doublewrite = OFF\n"
        );
    }

    #[test]
    fn option_names() {
        for ok in [
            "log_bin",
            "innodb-buffer-pool-size",
            "loose.x",
            "skip_name_resolve",
        ] {
            assert!(mycnf_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "!include /etc/shadow",
            "[mysqld_safe]",
            "a\nskip-grant-tables",
            "a b",
            "",
        ] {
            assert!(mycnf_key(bad).is_err(), "{bad:?}");
        }
    }
}
