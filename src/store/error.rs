//! A store rmatrix will not read: a file that is no store, a server that does not answer, a
//! view where a table belongs, a value over its cap. Like a run directory that cannot be
//! right, it is an input to fix (exit code 2), named by its label (a URL without password).

use crate::error::{ErrorKind, Kinded};

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("failed to open the store {store}")]
    Open {
        store: String,
        #[source]
        source: anyhow::Error,
    },
    #[error("failed to read the store {store}")]
    Read {
        store: String,
        #[source]
        source: anyhow::Error,
    },
}

impl Kinded for StoreError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::BadInput
    }
}
