//! `slap: {...}`: mysqlslap's `--auto-generate-sql` options, with mysqlslap's defaults.

use serde::{Deserialize, Serialize};

/// mysqlslap `--auto-generate-sql` options, with mysqlslap's defaults.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlapSpec {
    #[serde(default)]
    pub load_type: LoadType,
    #[serde(default = "one")]
    pub number_int_cols: u32,
    #[serde(default = "one")]
    pub number_char_cols: u32,
    #[serde(default)]
    pub primary_key: PrimaryKey,
    #[serde(default)]
    pub secondary_indexes: u32,
    #[serde(default = "ten")]
    pub unique_query_number: u32,
    #[serde(default = "ten")]
    pub unique_write_number: u32,
    /// Rows inserted before the load (mysqlslap's `--auto-generate-sql-write-number` - 1).
    #[serde(default = "ninety_nine")]
    pub preload_rows: u32,
    /// `COMMIT` every N statements (autocommit off); 0 keeps autocommit.
    #[serde(default)]
    pub commit: u32,
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadType {
    Write,
    Key,
    Read,
    Update,
    #[default]
    Mixed,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrimaryKey {
    #[default]
    None,
    Guid,
    Autoincrement,
}
