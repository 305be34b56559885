//! `rmatrix schema`: the JSON Schema of a matrix file.

use anyhow::Result;

use super::stdio::emit;
use crate::error::Outcome;

/// Print the schema (shipped as matrices/matrix.schema.json).
pub(super) fn schema() -> Result<Outcome> {
    emit(&crate::matrix::schema::schema_text())?;
    Ok(Outcome::Done)
}
