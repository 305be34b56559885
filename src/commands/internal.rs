//! The hidden commands rmatrix runs itself: on a client container (`drive-cell`) or an
//! engine's host (`await-server`, `engine-port`) of a pooled run.

use anyhow::Result;

use super::stdio::stdin_text;
use crate::error::Outcome;

/// `rmatrix drive-cell`: measure the cell given on stdin.
pub(super) async fn drive_cell() -> Result<Outcome> {
    crate::drive::drive_cell(&stdin_text()?).await?;
    Ok(Outcome::Done)
}

/// `rmatrix await-server`: wait for the deployment's server given on stdin.
pub(super) async fn await_server() -> Result<Outcome> {
    crate::drive::await_server(&stdin_text()?).await?;
    Ok(Outcome::Done)
}

/// `rmatrix engine-port`: a free TCP port of this host.
pub(super) fn engine_port() -> Result<Outcome> {
    crate::drive::engine_port()?;
    Ok(Outcome::Done)
}
