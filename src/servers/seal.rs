//! What a kept data set holds (`Seal`), as its family writes it into the server that
//! prepared it and reads it back from each copy (`servers::dataset` keeps the sets).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a prepared set holds, written into its server before it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seal {
    pub(crate) key: String,
    pub(crate) rows: u64,
    /// How long the prepare took.
    pub(crate) prepare_s: f64,
    /// `schema.table` -> the server's checksum of it.
    pub(crate) tables: BTreeMap<String, String>,
}
