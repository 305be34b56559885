//! The list of server families, one line each, and the `ServerKind` a matrix names them by.
//! Adding a family is its folder (`servers/<folder>/`, whose `<Variant>` type is its
//! `impl Family`) plus one line in `families!` below. The list stands below everything a
//! family uses, so that the matrix's types can name a kind; `registry.rs`, above the
//! families, reads the same list to find each kind's `Family`.

use serde::{Deserialize, Serialize};

/// The list: each family's variant, its folder and its name in a matrix (`kind:`), in the
/// order messages list them. Hands the list to the macro `$then` (`families!(then)`), so
/// that the kind (here) and its family's code (`registry.rs`) come from one list.
macro_rules! families {
    ($then:ident) => {
        $then! {
            /// MariaDB, MySQL, Percona Server; also any image or build no other family claims.
            Mysql(mysql) = "mysql",
            /// Redis, Valkey.
            Redis(redis) = "redis",
            /// PostgreSQL.
            Postgres(postgres) = "postgres",
        }
    };
}
pub(crate) use families;

/// The kinds, their names and their order, from the list.
macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident($folder:ident) = $name:literal, )*) => {
        /// A server family, as a matrix's `kind:` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
        pub enum ServerKind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl ServerKind {
            /// Every family, in the list's order.
            pub(crate) const ALL: &'static [ServerKind] = &[$( ServerKind::$variant ),*];

            /// The family's name in a matrix and in messages.
            pub(crate) fn name(self) -> &'static str {
                match self { $( ServerKind::$variant => $name, )* }
            }
        }
    };
}

families!(kinds);
