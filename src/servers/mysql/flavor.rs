//! Which server of the MySQL family: MariaDB, Oracle MySQL or Percona Server. They share a
//! protocol but not their defaults or features (MySQL 8+ logs binary by default, has no
//! thread pool and reports no `version_malloc_library`), so the plan needs the flavor from
//! the image or build name, and the read-back confirms it from what the server says.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::servers::check::Check;
use crate::servers::spec::ServerSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Flavor {
    Mariadb,
    Mysql,
    Percona,
}

impl Flavor {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Flavor::Mariadb => "MariaDB",
            Flavor::Mysql => "MySQL",
            Flavor::Percona => "Percona Server",
        }
    }

    /// `thread_handling = pool-of-threads`: MariaDB's and Percona's own thread pools
    /// (Oracle's is an Enterprise plugin, absent from community builds).
    pub(crate) fn has_thread_pool(self) -> bool {
        matches!(self, Flavor::Mariadb | Flavor::Percona)
    }

    /// The flavor an image reference or build name names (its last path part), if any:
    /// `mysql:8.4`, `mysql-9.7`, `percona/percona-server:8.0`, `mariadb-11.8`.
    pub(crate) fn from_name(name: &str) -> Option<Flavor> {
        let last = name
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_lowercase();
        if last.contains("percona") {
            Some(Flavor::Percona)
        } else if last.contains("mariadb") {
            Some(Flavor::Mariadb)
        } else if last.contains("mysql") {
            Some(Flavor::Mysql)
        } else {
            None
        }
    }

    /// The flavor a server spec names; None for an external server or an unknown name.
    pub(crate) fn of_spec(spec: &ServerSpec) -> Option<Flavor> {
        Flavor::from_name(spec.origin_name()?)
    }

    /// The flavor a running server reports: MariaDB says so in its version, Percona in its
    /// `version_comment`; anything else of this family is Oracle MySQL.
    pub(crate) fn reported(vars: &BTreeMap<String, String>) -> Flavor {
        let has =
            |k: &str, word: &str| vars.get(k).is_some_and(|v| v.to_lowercase().contains(word));
        if has("version", "mariadb") {
            Flavor::Mariadb
        } else if has("version_comment", "percona") {
            Flavor::Percona
        } else {
            Flavor::Mysql
        }
    }
}

/// The flavor the matrix implied against the one the server reports (a server built from a
/// folder named `mysql` that runs MariaDB measures something else than its name says).
pub(crate) fn check(expected: Flavor, vars: &BTreeMap<String, String>) -> Check {
    let actual = Flavor::reported(vars);
    let said = ["version", "version_comment"]
        .iter()
        .filter_map(|k| vars.get(*k).map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    Check {
        setting: "server".into(),
        variable: "version_comment".into(),
        expected: expected.name().into(),
        actual: Some(format!("{} ({said})", actual.name())),
        status: if actual == expected { "ok" } else { "mismatch" },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_imply_a_flavor() {
        for (name, f) in [
            ("mysql:8.4", Some(Flavor::Mysql)),
            ("mysql:9.1", Some(Flavor::Mysql)),
            ("mysql-9.7", Some(Flavor::Mysql)),
            ("mysql/mysql-server:8.0", Some(Flavor::Mysql)),
            ("percona/percona-server:8.0", Some(Flavor::Percona)),
            ("percona:8.0", Some(Flavor::Percona)),
            ("mariadb:11.4", Some(Flavor::Mariadb)),
            ("mariadb-10.11", Some(Flavor::Mariadb)),
            // Only the last part: a checkout under /work/mysql-tools builds what its folder says.
            (
                "/work/mysql-tools/containers/mariadb",
                Some(Flavor::Mariadb),
            ),
            ("rmatrix/db", None),
        ] {
            assert_eq!(Flavor::from_name(name), f, "{name}");
        }
    }

    #[test]
    fn servers_say_which_they_are() {
        let vars = |v: &str, c: &str| -> BTreeMap<String, String> {
            [("version", v), ("version_comment", c)]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let maria = vars("11.8.3-MariaDB-0+deb13u1", "Debian n/a");
        let mysql = vars("9.7.4-2", "(Debian)");
        let oracle = vars("8.4.3", "MySQL Community Server - GPL");
        let percona = vars("8.0.39-30", "Percona Server (GPL), Release 30, Revision 1");
        assert_eq!(Flavor::reported(&maria), Flavor::Mariadb);
        assert_eq!(Flavor::reported(&mysql), Flavor::Mysql);
        assert_eq!(Flavor::reported(&oracle), Flavor::Mysql);
        assert_eq!(Flavor::reported(&percona), Flavor::Percona);
        assert_eq!(check(Flavor::Mysql, &mysql).status, "ok");
        let c = check(Flavor::Mysql, &maria);
        assert_eq!(c.status, "mismatch");
        assert_eq!(
            c.actual.as_deref(),
            Some("MariaDB (11.8.3-MariaDB-0+deb13u1 Debian n/a)")
        );
    }
}
