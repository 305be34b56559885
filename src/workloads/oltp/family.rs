//! The SQL family of a server's kind, for oltp's entry points (`driver::run_iteration`,
//! `prepare::ensure`): what differs between families is theirs (`SqlFamily`), never a
//! branch here.

use anyhow::Result;

use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, WithSql};

/// What `kind`'s SQL family makes of `what`: a future, failing when `kind` is none.
pub(crate) fn sql_family<'a, T: 'a, W: WithSql<Output = FamilyFuture<'a, Result<T>>>>(
    kind: ServerKind,
    what: W,
) -> FamilyFuture<'a, Result<T>> {
    match kind.with_sql(what) {
        Some(future) => future,
        None => {
            Box::pin(async move { anyhow::bail!("oltp does not speak to {} servers", kind.name()) })
        }
    }
}
