//! Rendering a config's my.cnf settings into the file the server reads.

use indexmap::IndexMap;

use crate::servers::spec::CnfValue;

/// `[mysqld]` section with one `name = value` line per setting (a bare name for flags).
pub fn render(settings: &IndexMap<String, Option<CnfValue>>) -> String {
    let mut out = String::from("# rendered by rmatrix\n[mysqld]\n");
    for (name, value) in settings {
        match value {
            Some(CnfValue(v)) => out.push_str(&format!("{name} = {v}\n")),
            None => out.push_str(&format!("{name}\n")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_values_and_flags() {
        let settings: IndexMap<String, Option<CnfValue>> = crate::input::yaml::from_str(
            "{log_bin: mysql-bin, sync_binlog: 1, skip_name_resolve: ~, innodb_doublewrite: false}",
        )
        .unwrap();
        assert_eq!(
            render(&settings),
            "# rendered by rmatrix\n[mysqld]\nlog_bin = mysql-bin\nsync_binlog = 1\nskip_name_resolve\ninnodb_doublewrite = OFF\n"
        );
    }
}
