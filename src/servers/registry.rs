//! The server families, one folder each (`servers/<family>/`, its `impl Family`): each
//! kind's family, found from the list of `kind.rs`, and what is asked of every family.

use super::family::Family;
use super::kind::{families, ServerKind};
use std::sync::LazyLock;

use super::sql::WithSql;

/// Each kind's `Family`: the `<Variant>` type of its folder, `servers/<folder>/`.
macro_rules! lookup {
    ($( $(#[$doc:meta])* $variant:ident($folder:ident) = $name:literal, )*) => {
        impl ServerKind {
            /// The family's behaviour: config, container, readiness, read-back, columns.
            pub(crate) fn family(self) -> &'static dyn Family {
                match self { $( ServerKind::$variant => &super::$folder::$variant, )* }
            }

            /// `what` done with the kind's SQL family, when it is one (its folder's
            /// `with_sql`).
            pub(crate) fn with_sql<W: WithSql>(self, what: W) -> Option<W::Output> {
                match self { $( ServerKind::$variant => super::$folder::with_sql(what), )* }
            }
        }
    };
}

families!(lookup);

/// Asks only whether a kind is an SQL family.
struct IsSql;

impl WithSql for IsSql {
    type Output = ();
    fn with<F: super::sql::SqlFamily>(self) {}
}

impl ServerKind {
    /// The family an image or build name implies (`name`: its last path part, lower-case):
    /// the first family that claims it, else the registry's first.
    pub(crate) fn implied_by(name: &str) -> ServerKind {
        ServerKind::ALL
            .iter()
            .copied()
            .find(|k| k.family().claims(name))
            .unwrap_or(ServerKind::ALL[0])
    }

    /// The SQL families (those `with_sql` hands over), in the list's order.
    pub(crate) fn sql_families() -> &'static [ServerKind] {
        static SQL: LazyLock<Vec<ServerKind>> = LazyLock::new(|| {
            (ServerKind::ALL.iter().copied())
                .filter(|k| k.with_sql(IsSql).is_some())
                .collect()
        });
        &SQL
    }

    /// The families whose servers can be counted (`counted:`), for messages: "redis".
    pub(crate) fn countable() -> String {
        let names: Vec<&str> = (ServerKind::ALL.iter())
            .filter(|k| k.family().counted().is_some())
            .map(|k| k.name())
            .collect();
        names.join(", ")
    }

    /// A build name and its folder for examples in messages: the registry's first family's.
    pub(crate) fn build_example() -> (&'static str, &'static str) {
        let name = ServerKind::ALL[0].family().build_example();
        (name, name.split('-').next().unwrap_or(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_config_blocks_are_distinct() {
        let mut names: Vec<&str> = ServerKind::ALL.iter().map(|k| k.name()).collect();
        let mut keys: Vec<&str> = ServerKind::ALL
            .iter()
            .map(|k| k.family().config_block().key)
            .collect();
        names.dedup();
        keys.sort();
        keys.dedup();
        assert_eq!(names.len(), ServerKind::ALL.len());
        assert_eq!(keys.len(), ServerKind::ALL.len());
    }

    #[test]
    fn a_name_no_family_claims_is_the_first_familys() {
        assert_eq!(ServerKind::implied_by("valkey-8.1"), ServerKind::Redis);
        assert_eq!(ServerKind::implied_by("redis"), ServerKind::Redis);
        assert_eq!(
            ServerKind::implied_by("percona-server:8.0"),
            ServerKind::Mysql
        );
        assert_eq!(ServerKind::implied_by("my-own-build"), ServerKind::ALL[0]);
    }

    #[test]
    fn every_build_example_is_a_folder_under_containers() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("containers");
        for k in ServerKind::ALL {
            let name = k.family().build_example();
            let dir = name.split('-').next().unwrap_or(name);
            assert!(root.join(dir).join("Dockerfile").is_file(), "{name}");
        }
        assert_eq!(ServerKind::build_example(), ("mariadb-10.11", "mariadb"));
    }
}
