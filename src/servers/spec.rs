//! Where a server comes from, as the matrix writes it (`servers:`).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::input::untrusted::CPUS;

pub use super::config::{Allocator, CnfValue, ConfigBlock, ConfigSpec, Settings};
pub use super::images::source::SourceSpec;
pub use super::kind::ServerKind;

/// Where a server comes from: exactly one of `image`, `build`, `source` or `external`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = one_origin)]
pub struct ServerSpec {
    /// A public image, pulled when missing (e.g. `mariadb:11.4`, `mysql:8.0`).
    #[serde(default)]
    pub image: Option<String>,
    /// A directory under `containers/` with a Dockerfile, built when its content or build
    /// arguments changed: `mariadb-10.11` or `{dir: mariadb, args: {suite: trixie}}`.
    #[serde(default)]
    pub build: Option<BuildSpec>,
    /// A server someone else runs: nothing is started or changed, variables are still read.
    #[serde(default)]
    pub external: Option<ExternalSpec>,
    /// A build's own packages (`.deb` files, relative to the matrix), installed over the
    /// suite's in a `build:` image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// A server built from a git work tree at a commit with a family's recipe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceSpec>,
    /// The protocol family; inferred from the image or build name when omitted.
    #[serde(default)]
    pub kind: Option<ServerKind>,
    /// The host CPUs the server's container may run on (Docker's `--cpuset-cpus`), e.g.
    /// `"1"` or `"0-1"`: a server pinned to one core saturates at a load this machine can
    /// offer, and the client keeps the other cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::input::patterns::cpuset_schema)]
    pub cpuset: Option<String>,
    /// A CPU quota for the server's container, in CPUs (Docker's `--cpus`, the engine's
    /// `NanoCpus`), e.g. `0.9`: at most that much CPU time per wall-clock second, on any of
    /// its cores. With `cpuset: "1"` and a CPU-bound load, `cpus: 0.9` is a slowdown of a
    /// known size (scripts/bench/power.sh measures it before injecting it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = *CPUS.start(), max = *CPUS.end()))]
    pub cpus: Option<f64>,
    /// A memory limit for the server's container (Docker's `--memory`, no swap beyond it), e.g.
    /// `512m`: a server that outgrows it is killed by the kernel, and rmatrix says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// The keys a server comes from, of which it gives exactly one (`check_axes_size`).
const ORIGINS: [&str; 4] = ["image", "build", "source", "external"];

/// The schema's side of `ORIGINS`: exactly one of them, not null (`image: ~` gives none).
fn one_origin(schema: &mut schemars::Schema) {
    let one = |key: &str| serde_json::json!({"required": [key], "properties": {key: {"not": {"type": "null"}}}});
    schema.insert("oneOf".into(), ORIGINS.map(one).to_vec().into());
}

impl ServerSpec {
    /// The name its family and flavor are inferred from: the image, the build name or
    /// folder, or the source recipe.
    pub(crate) fn origin_name(&self) -> Option<&str> {
        self.image
            .as_deref()
            .or(self.build.as_ref().map(BuildSpec::name))
            .or(self.source.as_ref().map(|s| s.recipe.as_str()))
    }

    /// The memory limit in bytes (checked when the matrix was read).
    pub(crate) fn memory_bytes(&self) -> Option<u64> {
        self.memory
            .as_deref()
            .and_then(|m| crate::input::untrusted::memory(m).ok())
    }

    /// The family: `kind` where the matrix says, else the one its image or build name implies.
    pub(crate) fn kind(&self) -> ServerKind {
        if let Some(k) = self.kind {
            return k;
        }
        let name = self.origin_name().unwrap_or("");
        // The last part only: a build folder's path may pass through any directory (a
        // checkout under /work/<another family>-tools must not change the family).
        let name = name
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_lowercase();
        ServerKind::implied_by(&name)
    }
}

/// `build:` as a name, or as a folder with build arguments.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum BuildSpec {
    /// A folder under `containers/`, a name from `containers/builds.yaml` (`mariadb-10.11`),
    /// or, with a `/`, a path relative to the matrix file.
    Name(String),
    /// `{dir: mariadb, args: {suite: trixie}}`: a folder (as above, without the names) and
    /// the values of `ARG`s its Dockerfile declares.
    Dir(BuildDir),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildDir {
    pub(crate) dir: String,
    #[serde(default)]
    #[schemars(transform = crate::input::patterns::build_args)]
    pub(crate) args: IndexMap<String, String>,
}

impl BuildSpec {
    /// The name or folder, which the server family is inferred from.
    pub(crate) fn name(&self) -> &str {
        match self {
            BuildSpec::Name(n) => n,
            BuildSpec::Dir(d) => &d.dir,
        }
    }
}

/// A string, or a mapping read as `BuildDir` (so its unknown keys are reported as such).
impl<'de> Deserialize<'de> for BuildSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny};
        fn shape() -> String {
            let (name, dir) = ServerKind::build_example();
            format!(
                "a folder under containers/ (e.g. `{name}`) or \
                 `{{dir: {dir}, args: {{suite: trixie}}}}`"
            )
        }
        // Anything else is consumed and refused after the visitor, where the parser gives the
        // error the value's position.
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Result<BuildSpec, &'static str>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(&shape())
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Ok(BuildSpec::Name(v.to_string())))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                BuildDir::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(|b| Ok(BuildSpec::Dir(b)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Err("a list"))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Err("a boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Err("empty"))
            }
        }
        d.deserialize_any(V)?
            .map_err(|found| D::Error::custom(format!("must be {}, not {found}", shape())))
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    #[serde(default = "default_host")]
    pub(crate) host: String,
    pub(crate) port: u16,
    #[serde(default = "default_user")]
    pub(crate) user: String,
    /// Name of the environment variable that holds the password.
    #[serde(default)]
    pub(crate) password_env: Option<String>,
    /// Whether a workload may empty this server's data before each iteration (a workload
    /// that does is refused on an external server without it: it may be someone's data).
    #[serde(default)]
    pub(crate) may_reset: bool,
}

fn default_host() -> String {
    "127.0.0.1".into()
}
fn default_user() -> String {
    "root".into()
}
