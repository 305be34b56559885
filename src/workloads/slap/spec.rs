//! `slap: {...}`: mysqlslap's `--auto-generate-sql` options, with mysqlslap's defaults.

use serde::{Deserialize, Serialize};

use crate::input::bounds::Bounded;

/// mysqlslap `--auto-generate-sql` options, with mysqlslap's defaults.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SlapSpec {
    #[serde(default)]
    pub(crate) load_type: LoadType,
    #[serde(default = "one")]
    pub(crate) number_int_cols: u32,
    #[serde(default = "one")]
    pub(crate) number_char_cols: u32,
    #[serde(default)]
    pub(crate) primary_key: PrimaryKey,
    #[serde(default)]
    pub(crate) secondary_indexes: u32,
    #[serde(default = "ten")]
    pub(crate) unique_query_number: u32,
    #[serde(default = "ten")]
    pub(crate) unique_write_number: u32,
    /// Rows inserted before the load (mysqlslap's `--auto-generate-sql-write-number` - 1).
    #[serde(default = "ninety_nine")]
    pub(crate) preload_rows: u32,
    /// `COMMIT` every N statements (autocommit off); 0 keeps autocommit.
    #[serde(default)]
    pub(crate) commit: u32,
}

impl SlapSpec {
    /// Every size with its range: columns and indexes within what a table may have (MySQL:
    /// 4096 columns, 64 indexes), statement pools and preloaded rows within what a client
    /// holds in memory.
    pub(crate) fn sizes(&self) -> [Bounded<'static>; 7] {
        [
            ("number_int_cols", self.number_int_cols.into(), 0..=1000),
            ("number_char_cols", self.number_char_cols.into(), 0..=1000),
            ("secondary_indexes", self.secondary_indexes.into(), 0..=64),
            (
                "unique_query_number",
                self.unique_query_number.into(),
                0..=1_000_000,
            ),
            (
                "unique_write_number",
                self.unique_write_number.into(),
                0..=1_000_000,
            ),
            ("preload_rows", self.preload_rows.into(), 0..=100_000_000),
            ("commit", self.commit.into(), 0..=1_000_000),
        ]
    }
}

impl Default for SlapSpec {
    fn default() -> Self {
        crate::input::yaml::from_str("{}").expect("invariant: every SlapSpec field has a default")
    }
}

fn one() -> u32 {
    1
}
fn ten() -> u32 {
    10
}
fn ninety_nine() -> u32 {
    99
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LoadType {
    Write,
    Key,
    Read,
    Update,
    #[default]
    Mixed,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PrimaryKey {
    #[default]
    None,
    Guid,
    Autoincrement,
}
