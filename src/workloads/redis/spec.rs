//! `redis: {...}`: rmatrix's own Redis client with redis-benchmark's options and defaults
//! (the tests are shared with `redis_benchmark`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// redis-benchmark's tests (`-t` names) plus memtier's mixed SET:GET load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RedisTest {
    PingInline,
    PingMbulk,
    Set,
    Get,
    Incr,
    Lpush,
    Rpush,
    Lpop,
    Rpop,
    Sadd,
    Hset,
    Spop,
    Zadd,
    Zpopmin,
    #[serde(rename = "lrange_100")]
    Lrange100,
    #[serde(rename = "lrange_300")]
    Lrange300,
    #[serde(rename = "lrange_500")]
    Lrange500,
    #[serde(rename = "lrange_600")]
    Lrange600,
    Mset,
    /// memtier-style SET:GET mix (`ratio`), on the keys `set` and `get` use.
    Mixed,
}

impl RedisTest {
    #[cfg(test)]
    pub(crate) const ALL: [RedisTest; 20] = [
        RedisTest::PingInline,
        RedisTest::PingMbulk,
        RedisTest::Set,
        RedisTest::Get,
        RedisTest::Incr,
        RedisTest::Lpush,
        RedisTest::Rpush,
        RedisTest::Lpop,
        RedisTest::Rpop,
        RedisTest::Sadd,
        RedisTest::Hset,
        RedisTest::Spop,
        RedisTest::Zadd,
        RedisTest::Zpopmin,
        RedisTest::Lrange100,
        RedisTest::Lrange300,
        RedisTest::Lrange500,
        RedisTest::Lrange600,
        RedisTest::Mset,
        RedisTest::Mixed,
    ];

    /// The name in the matrix and in redis-benchmark's `-t`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RedisTest::PingInline => "ping_inline",
            RedisTest::PingMbulk => "ping_mbulk",
            RedisTest::Set => "set",
            RedisTest::Get => "get",
            RedisTest::Incr => "incr",
            RedisTest::Lpush => "lpush",
            RedisTest::Rpush => "rpush",
            RedisTest::Lpop => "lpop",
            RedisTest::Rpop => "rpop",
            RedisTest::Sadd => "sadd",
            RedisTest::Hset => "hset",
            RedisTest::Spop => "spop",
            RedisTest::Zadd => "zadd",
            RedisTest::Zpopmin => "zpopmin",
            RedisTest::Lrange100 => "lrange_100",
            RedisTest::Lrange300 => "lrange_300",
            RedisTest::Lrange500 => "lrange_500",
            RedisTest::Lrange600 => "lrange_600",
            RedisTest::Mset => "mset",
            RedisTest::Mixed => "mixed",
        }
    }

    /// The title redis-benchmark prints for the test (its CSV `test` column).
    pub(crate) fn title(self) -> &'static str {
        match self {
            RedisTest::PingInline => "PING_INLINE",
            RedisTest::PingMbulk => "PING_MBULK",
            RedisTest::Lrange100 => "LRANGE_100 (first 100 elements)",
            RedisTest::Lrange300 => "LRANGE_300 (first 300 elements)",
            RedisTest::Lrange500 => "LRANGE_500 (first 500 elements)",
            RedisTest::Lrange600 => "LRANGE_600 (first 600 elements)",
            RedisTest::Mset => "MSET (10 keys)",
            RedisTest::Mixed => "MIXED",
            t => match t.command() {
                "set" => "SET",
                "get" => "GET",
                "incr" => "INCR",
                "lpush" => "LPUSH",
                "rpush" => "RPUSH",
                "lpop" => "LPOP",
                "rpop" => "RPOP",
                "sadd" => "SADD",
                "hset" => "HSET",
                "spop" => "SPOP",
                "zadd" => "ZADD",
                _ => "ZPOPMIN",
            },
        }
    }

    /// The server command the test sends (INFO commandstats name, lower case).
    pub(crate) fn command(self) -> &'static str {
        match self {
            RedisTest::PingInline | RedisTest::PingMbulk => "ping",
            RedisTest::Lrange100
            | RedisTest::Lrange300
            | RedisTest::Lrange500
            | RedisTest::Lrange600 => "lrange",
            RedisTest::Mixed => "set",
            t => t.name(),
        }
    }

    /// Elements LRANGE reads (the list is filled to this size first), else 0.
    pub(crate) fn lrange_len(self) -> usize {
        match self {
            RedisTest::Lrange100 => 100,
            RedisTest::Lrange300 => 300,
            RedisTest::Lrange500 => 500,
            RedisTest::Lrange600 => 600,
            _ => 0,
        }
    }
}

impl fmt::Display for RedisTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How keys are drawn from the keyspace (memtier's `--key-pattern`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum KeyDistribution {
    #[default]
    Uniform,
    /// Normal around the middle of the keyspace, standard deviation keyspace/6 (memtier's).
    Gaussian,
    /// Each client walks the keyspace in order, starting at its own offset.
    Sequential,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Transport {
    #[default]
    Tcp,
    /// The server's unix socket, mounted from the deployment directory.
    Unix,
}

impl Transport {
    /// As manifest.json records it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix socket",
        }
    }
}

/// memtier's `--ratio SETS:GETS`, e.g. `1:10`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub(crate) struct Ratio {
    pub(crate) sets: u32,
    pub(crate) gets: u32,
}

impl Default for Ratio {
    fn default() -> Self {
        Ratio { sets: 1, gets: 10 }
    }
}

impl From<Ratio> for String {
    fn from(r: Ratio) -> String {
        format!("{}:{}", r.sets, r.gets)
    }
}

impl std::str::FromStr for Ratio {
    type Err = String;
    fn from_str(s: &str) -> Result<Ratio, String> {
        let bad = || format!("`{s}` is not a SETS:GETS ratio like 1:10");
        let (a, b) = s.split_once(':').ok_or_else(bad)?;
        let sets = a.trim().parse().map_err(|_| bad())?;
        let gets = b.trim().parse().map_err(|_| bad())?;
        if sets == 0 && gets == 0 {
            return Err(format!(
                "ratio `{s}` sends nothing: one side must be above 0"
            ));
        }
        Ok(Ratio { sets, gets })
    }
}

/// What `from_str` reads: two counts around a colon.
impl schemars::JsonSchema for Ratio {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Ratio".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "SETS:GETS, e.g. `1:10`.",
            "type": "string",
            "pattern": r"^\s*[0-9]+\s*:\s*[0-9]+\s*$"
        })
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// rmatrix's own Redis client, redis-benchmark's options and memtier's key patterns.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedisSpec {
    pub(crate) test: RedisTest,
    /// Value size in bytes (redis-benchmark `-d`).
    #[serde(default = "three")]
    pub(crate) data_size: usize,
    /// Random keys in 0..keyspace (redis-benchmark `-r`); none: one fixed key per test.
    #[serde(default)]
    pub(crate) keyspace: Option<u64>,
    #[serde(default)]
    pub(crate) distribution: KeyDistribution,
    /// Requests in flight per connection (redis-benchmark `-P`).
    #[serde(default = "one")]
    pub(crate) pipeline: u32,
    #[serde(default)]
    pub(crate) transport: Transport,
    /// SET:GET ratio of the `mixed` test (memtier's default 1:10).
    #[serde(default)]
    pub(crate) ratio: Option<Ratio>,
}

/// The largest value (`-d`): a client holds `pipeline` of them per connection.
pub(crate) const MAX_DATA_SIZE: u64 = 16 * 1024 * 1024;
/// The most keys (`-r`): far beyond what a test server holds.
pub(crate) const MAX_KEYSPACE: u64 = 1_000_000_000_000;
/// The most requests in flight per connection (`-P`).
pub(crate) const MAX_PIPELINE: u64 = 10_000;

fn three() -> usize {
    3
}
fn one() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_yaml() {
        for t in RedisTest::ALL {
            let parsed: RedisTest = crate::input::yaml::from_str(t.name()).unwrap();
            assert_eq!(parsed, t);
        }
        assert_eq!(RedisTest::Lrange300.command(), "lrange");
        assert_eq!(RedisTest::Mset.title(), "MSET (10 keys)");
        assert_eq!(RedisTest::Zpopmin.title(), "ZPOPMIN");
    }

    #[test]
    fn spec_defaults_and_ratio() {
        let s: RedisSpec = crate::input::yaml::from_str("{test: mixed, ratio: '1:4'}").unwrap();
        assert_eq!(s.data_size, 3);
        assert_eq!(s.pipeline, 1);
        assert_eq!(s.ratio, Some(Ratio { sets: 1, gets: 4 }));
        assert!(crate::input::yaml::from_str::<RedisSpec>("{test: mixed, ratio: '0:0'}").is_err());
        assert!(crate::input::yaml::from_str::<RedisSpec>("{test: sett}").is_err());
    }
}
