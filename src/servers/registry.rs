//! The server families, one folder each (`servers/<family>/`, its `impl Family`). This file
//! is the registry: adding a family is its folder plus one line in `families!` below.

use serde::{Deserialize, Serialize};

use super::family::Family;

/// The registry: each family's variant, its `Family` value and its name in a matrix
/// (`kind:`), in the order messages list them.
macro_rules! families {
    ($( $(#[$doc:meta])* $variant:ident($family:path) = $name:literal, )*) => {
        /// A server family, as a matrix's `kind:` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
        pub enum ServerKind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl ServerKind {
            /// Every family, in registry order.
            pub(crate) const ALL: &'static [ServerKind] = &[$( ServerKind::$variant ),*];

            /// The family's name in a matrix and in messages.
            pub(crate) fn name(self) -> &'static str {
                match self { $( ServerKind::$variant => $name, )* }
            }

            /// The family's behaviour: config, container, readiness, read-back, columns.
            pub(crate) fn family(self) -> &'static dyn Family {
                match self { $( ServerKind::$variant => &$family, )* }
            }
        }
    };
}

families! {
    /// MariaDB, MySQL, Percona Server; also any image or build no other family claims.
    Mysql(super::mysql::Mysql) = "mysql",
    /// Redis, Valkey.
    Redis(super::redis::Redis) = "redis",
    /// PostgreSQL.
    Postgres(super::postgres::Postgres) = "postgres",
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
