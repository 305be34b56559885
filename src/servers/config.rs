//! A server variant as the matrix writes it (`configs:`): what every family shares
//! (environment, allocator, arguments) and one settings block per family, whose key, file
//! and key check the family declares (`Family::config_block`).

use std::sync::LazyLock;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::kind::ServerKind;
use crate::input::patterns;
use crate::input::yaml::Scalar;

/// One family's settings as written, in the matrix's order; a null value is a bare flag.
pub type Settings = IndexMap<String, Option<CnfValue>>;

/// A family's block of a config (`configs.<name>.<key>`), declared by the family.
#[derive(Debug, Clone, Copy)]
pub struct ConfigBlock {
    /// The key under `configs.<name>`.
    pub(crate) key: &'static str,
    /// The file the block is rendered into, in the deployment's folder.
    pub(crate) file: &'static str,
    /// Whether a setting may have no value (written as a bare flag).
    pub(crate) bare_flags: bool,
    /// Refuses a setting name that would be more than one setting of the file (an include,
    /// a section, a newline), with the reason. Values are checked by `untrusted::config_value`.
    pub(crate) check_key: fn(&str) -> Result<(), String>,
}

/// The keys every family shares, before the families' blocks.
const SHARED_FIELDS: [&str; 3] = ["env", "allocator", "args"];

/// Every family's block, in the order of the list (`kind.rs`).
pub(crate) fn config_blocks() -> impl Iterator<Item = ConfigBlock> {
    ServerKind::ALL.iter().map(|k| k.family().config_block())
}

/// The keys a config may have, as messages list them.
fn fields() -> &'static [&'static str] {
    static FIELDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        SHARED_FIELDS
            .into_iter()
            .chain(config_blocks().map(|b| b.key))
            .collect()
    });
    &FIELDS
}

static NO_SETTINGS: LazyLock<Settings> = LazyLock::new(Settings::new);

/// A server variant: environment, allocator, extra arguments, and each family's settings.
#[derive(Debug, Clone, Default)]
pub struct ConfigSpec {
    pub(crate) env: IndexMap<String, String>,
    /// Preload an allocator into the server: `system`, `tcmalloc` or `jemalloc`.
    pub(crate) allocator: Option<Allocator>,
    /// Extra server command-line arguments.
    pub(crate) args: Vec<String>,
    /// The families' settings blocks the config has, by block key; a server reads its own.
    pub(crate) blocks: IndexMap<&'static str, Settings>,
}

impl ConfigSpec {
    /// The settings of the block called `key` (none when the config has no such block).
    pub(crate) fn settings(&self, key: &str) -> &Settings {
        self.blocks.get(key).unwrap_or(&NO_SETTINGS)
    }

    /// The server's environment from this config: the allocator preload, then `env`.
    pub(crate) fn container_env(&self) -> Vec<(String, String)> {
        let preload = self
            .allocator
            .and_then(|a| a.preload())
            .map(|(lib, _)| ("LD_PRELOAD".to_string(), lib.to_string()));
        preload
            .into_iter()
            .chain(self.env.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect()
    }

    /// True when the config would change a server (and so cannot apply to an external one).
    pub(crate) fn changes_server(&self) -> bool {
        self.blocks.values().any(|s| !s.is_empty())
            || !self.env.is_empty()
            || !self.args.is_empty()
            || matches!(self.allocator, Some(a) if a != Allocator::System)
    }
}

/// A key of a config: a shared one or a family's block.
enum Field {
    Env,
    Allocator,
    Args,
    Block(ConfigBlock),
}

/// Read as serde's derive reads a field name, so that an unknown key is reported at itself.
impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("field identifier")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
                match v {
                    "env" => Ok(Field::Env),
                    "allocator" => Ok(Field::Allocator),
                    "args" => Ok(Field::Args),
                    _ => config_blocks()
                        .find(|b| b.key == v)
                        .map(Field::Block)
                        .ok_or_else(|| E::unknown_field(v, fields())),
                }
            }
        }
        d.deserialize_identifier(V)
    }
}

/// `deny_unknown_fields` with the families' blocks among the fields.
impl<'de> Deserialize<'de> for ConfigSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ConfigSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("struct ConfigSpec")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ConfigSpec, A::Error> {
                use serde::de::Error;
                let mut c = ConfigSpec::default();
                let mut seen: Vec<&'static str> = Vec::new();
                while let Some(field) = a.next_key::<Field>()? {
                    let name = match &field {
                        Field::Env => "env",
                        Field::Allocator => "allocator",
                        Field::Args => "args",
                        Field::Block(b) => b.key,
                    };
                    if seen.contains(&name) {
                        return Err(A::Error::duplicate_field(name));
                    }
                    seen.push(name);
                    match field {
                        Field::Env => c.env = a.next_value()?,
                        Field::Allocator => c.allocator = a.next_value()?,
                        Field::Args => c.args = a.next_value()?,
                        Field::Block(b) => {
                            let settings = if b.bare_flags {
                                a.next_value::<Settings>()?
                            } else {
                                let valued: IndexMap<String, CnfValue> = a.next_value()?;
                                valued.into_iter().map(|(k, v)| (k, Some(v))).collect()
                            };
                            c.blocks.insert(b.key, settings);
                        }
                    }
                }
                Ok(c)
            }
        }
        d.deserialize_struct("ConfigSpec", fields(), V)
    }
}

/// The shared keys and every family's block (`config_blocks`), as `Deserialize` reads them.
impl schemars::JsonSchema for ConfigSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ConfigSpec".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut properties = serde_json::Map::new();
        let mut add = |key: &str, description: String, schema: schemars::Schema| {
            let mut schema = schema.to_value();
            if let Some(map) = schema.as_object_mut() {
                map.insert("description".into(), description.into());
            }
            properties.insert(key.into(), schema);
        };
        let mut env = g.subschema_for::<IndexMap<String, String>>();
        env.insert("additionalProperties".into(), patterns::one_line());
        add(
            "env",
            "Environment variables of the server's container.".into(),
            env,
        );
        add(
            "allocator",
            "Preload an allocator into the server: `system`, `tcmalloc` or `jemalloc`.".into(),
            g.subschema_for::<Option<Allocator>>(),
        );
        add(
            "args",
            "Extra server command-line arguments.".into(),
            g.subschema_for::<Vec<String>>(),
        );
        for b in config_blocks() {
            let schema = match b.bare_flags {
                true => g.subschema_for::<Settings>(),
                false => g.subschema_for::<IndexMap<String, CnfValue>>(),
            };
            let flags = if b.bare_flags {
                " (`name: ~` is a bare flag)"
            } else {
                ""
            };
            let what = format!("Settings rendered into the server's {}{flags}.", b.file);
            add(b.key, what, schema);
        }
        schemars::json_schema!({
            "description": "A server variant: environment, allocator, arguments, and the \
                            settings of each server family.",
            "type": "object",
            "properties": properties,
            "additionalProperties": false
        })
    }
}

/// What `Deserialize` reads: a scalar (a null is a bare flag, where the block takes one).
impl schemars::JsonSchema for CnfValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CnfValue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut value = patterns::one_line();
        value["description"] =
            "A setting's value: a string, number or boolean (written ON/OFF), on one line.".into();
        value.try_into().expect("invariant: a schema object")
    }
}

impl Serialize for ConfigSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("env", &self.env)?;
        m.serialize_entry("allocator", &self.allocator)?;
        m.serialize_entry("args", &self.args)?;
        for (key, settings) in &self.blocks {
            m.serialize_entry(key, settings)?;
        }
        m.end()
    }
}

/// A config file's value as written in YAML: kept as text, booleans as `ON`/`OFF`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CnfValue(pub String);

impl<'de> Deserialize<'de> for CnfValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Scalar::deserialize(d)? {
            Scalar::Bool(b) => Ok(CnfValue(if b { "ON" } else { "OFF" }.into())),
            Scalar::Other(kind) => Err(D::Error::custom(format!(
                "a config value must be a string, number, boolean or empty, not {kind}"
            ))),
            s => s.text().map(CnfValue).ok_or_else(|| {
                D::Error::custom("a config value must be a string, number, boolean or empty")
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Allocator {
    System,
    Tcmalloc,
    Jemalloc,
}

impl Allocator {
    /// The library to preload and the word its path and the server's own report show.
    /// A bare file name: the dynamic loader looks it up in the image's own library path, so
    /// the same name works on every architecture and distribution that ships the library
    /// (a path fixed to /usr/lib/x86_64-linux-gnu/ preloads nothing on arm64).
    pub(crate) fn preload(self) -> Option<(&'static str, &'static str)> {
        match self {
            Allocator::System => None,
            Allocator::Tcmalloc => Some(("libtcmalloc_minimal.so.4", "tcmalloc")),
            Allocator::Jemalloc => Some(("libjemalloc.so.2", "jemalloc")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> ConfigSpec {
        crate::input::yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn each_family_block_is_read_under_its_key() {
        for b in config_blocks() {
            let c = config(&format!("{{{}: {{a: 1}}, env: {{X: y}}}}", b.key));
            assert_eq!(
                c.settings(b.key)["a"],
                Some(CnfValue("1".into())),
                "{}",
                b.key
            );
            assert!(c.changes_server());
            assert_eq!(c.blocks.len(), 1);
        }
        assert!(config("{}").settings("no-such-block").is_empty());
        assert!(!config("{allocator: system}").changes_server());
    }

    #[test]
    fn a_bare_flag_only_where_the_family_takes_one() {
        for b in config_blocks() {
            let text = format!("{{{}: {{flag: ~}}}}", b.key);
            match crate::input::yaml::from_str::<ConfigSpec>(&text) {
                Ok(c) => {
                    assert!(b.bare_flags, "{}", b.key);
                    assert_eq!(c.settings(b.key)["flag"], None);
                }
                Err(e) => {
                    assert!(!b.bare_flags, "{}", b.key);
                    assert!(e.to_string().contains("a config value must be"), "{e}");
                }
            }
        }
    }

    #[test]
    fn an_unknown_key_lists_the_shared_keys_and_every_block() {
        let e = crate::input::yaml::from_str::<ConfigSpec>("{nope: 1}").unwrap_err();
        let blocks: Vec<&str> = config_blocks().map(|b| b.key).collect();
        let listed = format!("env, allocator, args, {}", blocks.join(", "));
        assert!(e.to_string().contains(&listed), "{e}");
    }
}
