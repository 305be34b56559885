//! A store rmatrix will not read: a file that is no store, a server that does not answer, a
//! view where a table belongs, a value over its cap. Like a run directory that cannot be
//! right, it is an input to fix (exit code 2), named by its label (a URL without password).

use crate::error::{ErrorKind, Kinded};

#[derive(Debug)]
pub(crate) enum StoreError {
    Open {
        store: String,
        source: anyhow::Error,
    },
    Read {
        store: String,
        source: anyhow::Error,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Open { store, .. } => write!(f, "failed to open the store {store}"),
            StoreError::Read { store, .. } => write!(f, "failed to read the store {store}"),
        }
    }
}

impl Kinded for StoreError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::BadInput
    }

    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Open { source, .. } | StoreError::Read { source, .. } => Some(&**source),
        }
    }
}

crate::error::kinded!(StoreError);
