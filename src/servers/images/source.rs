//! Servers built from a source tree at a commit (`source: {git, rev, recipe}`), as the matrix
//! writes them, and the recipes the families offer. The commit is found by `git`, the image
//! made by `build`.

use serde::{Deserialize, Serialize};

use crate::servers::kind::ServerKind;

/// `servers.<name>.source` as the matrix writes it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// A git work tree on this host: a path relative to the matrix file, or absolute.
    pub(crate) git: String,
    /// The commit to build: a hash, tag, branch or `HEAD~3` (resolved when the matrix is read).
    pub(crate) rev: String,
    /// How the tree is built: a recipe of the server's family (`redis`, `mariadb`, ...).
    #[schemars(transform = recipe_names)]
    pub(crate) recipe: String,
    /// Options for the recipe's build: `NAME=VALUE` for make, `-DNAME=VALUE` for cmake.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) flags: Vec<String>,
    /// The Debian suite of the toolchain and the run image.
    #[serde(default = "default_suite")]
    #[schemars(with = "BuildArgValue")]
    pub(crate) suite: String,
}

/// `recipe` in the schema: one of the recipes there are (`Recipe::find`).
fn recipe_names(schema: &mut schemars::Schema) {
    schema.insert("type".into(), "string".into());
    schema.insert("enum".into(), Recipe::names().into());
}

/// A source build's `suite`, a build argument's value in the schema (`untrusted::build_arg_value`).
struct BuildArgValue;

impl schemars::JsonSchema for BuildArgValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BuildArgValue".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::input::patterns::build_arg_value()
            .try_into()
            .expect("invariant: a schema object")
    }
}

fn default_suite() -> String {
    "bookworm".into()
}

/// How a recipe's build takes options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagStyle {
    /// make variables: `NAME=VALUE`.
    Make,
    /// cmake cache entries: `-DNAME=VALUE` or `-DNAME:TYPE=VALUE`.
    Cmake,
}

/// A family's way of building one flavor from source: `containers/source/<folder>/` holds
/// its toolchain (`build/`) and run image (`run/`); the run image takes the family's
/// entrypoint from `containers/<entrypoint_from>/entrypoint.sh`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipe {
    pub(crate) name: &'static str,
    pub(crate) folder: &'static str,
    pub(crate) entrypoint_from: &'static str,
    pub(crate) flags: FlagStyle,
}

impl Recipe {
    /// The recipe called `name`, with its family; else the names there are.
    pub(crate) fn find(name: &str) -> Result<(ServerKind, &'static Recipe), String> {
        ServerKind::ALL
            .iter()
            .flat_map(|k| k.family().recipes().iter().map(move |r| (*k, r)))
            .find(|(_, r)| r.name == name)
            .ok_or_else(|| {
                format!(
                    "unknown recipe `{}`; recipes: {}",
                    crate::input::untrusted::printable(name),
                    Recipe::names().join(", ")
                )
            })
    }

    pub(crate) fn names() -> Vec<&'static str> {
        ServerKind::ALL
            .iter()
            .flat_map(|k| k.family().recipes().iter().map(|r| r.name))
            .collect()
    }

    /// Whether `flag` is an option this recipe's build takes, as one argument: a name and
    /// a value of letters, digits and `_.,/+=:@%-` and spaces, never a shell's or a
    /// Dockerfile's metacharacter (the flags reach the build as arguments, but a recipe's
    /// script is a shell script).
    pub(crate) fn check_flag(&self, flag: &str) -> Result<(), String> {
        let shown = crate::input::untrusted::printable(flag);
        let (name, value) = match self.flags {
            FlagStyle::Make => flag.split_once('='),
            FlagStyle::Cmake => flag.strip_prefix("-D").and_then(|f| f.split_once('=')),
        }
        .ok_or_else(|| match self.flags {
            FlagStyle::Make => format!("flag `{shown}` must be a make variable, NAME=VALUE"),
            FlagStyle::Cmake => format!("flag `{shown}` must be a cmake option, -DNAME=VALUE"),
        })?;
        let name = match self.flags {
            FlagStyle::Cmake => name.split_once(':').map_or(name, |(n, _)| n),
            FlagStyle::Make => name,
        };
        let name_ok = name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(format!(
                "flag `{shown}`: `{}` is no variable name (letters, digits, _)",
                crate::input::untrusted::printable(name)
            ));
        }
        let value_ok = value.len() <= 512
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.,/+=:@% -".contains(c));
        if !value_ok {
            return Err(format!(
                "flag `{shown}`: its value may hold letters, digits, spaces and `_.,/+=:@%-` only"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(style: FlagStyle) -> Recipe {
        Recipe {
            name: "r",
            folder: "r",
            entrypoint_from: "r",
            flags: style,
        }
    }

    #[test]
    fn flags_are_variables_with_plain_values() {
        let make = recipe(FlagStyle::Make);
        assert!(make.check_flag("USE_SYSTEM_JEMALLOC=yes").is_ok());
        assert!(make.check_flag("CFLAGS=-O2 -g").is_ok());
        assert!(make.check_flag("MALLOC=").is_ok());
        for bad in [
            "x",
            "=1",
            "A B=1",
            "A=$(id)",
            "A=`id`",
            "A=1;id",
            "A=1|x",
            "A=1\nRUN x",
            "A=\"q\"",
            "A=1 && id",
            "-DX=1",
        ] {
            assert!(make.check_flag(bad).is_err(), "{bad:?}");
        }
        let cmake = recipe(FlagStyle::Cmake);
        assert!(cmake.check_flag("-DWITH_JEMALLOC=yes").is_ok());
        assert!(cmake
            .check_flag("-DCMAKE_BUILD_TYPE:STRING=RelWithDebInfo")
            .is_ok());
        for bad in ["WITH=1", "-D=1", "-DX", "-DX=$HOME", "-DX=a'b"] {
            assert!(cmake.check_flag(bad).is_err(), "{bad:?}");
        }
    }
}
