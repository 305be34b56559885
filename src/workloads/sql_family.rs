//! The SQL family of a server's kind, for the SQL kinds' entry points (oltp's iteration and
//! prepare, tpcc's jobs): what differs between families is theirs (`SqlFamily`), never a
//! branch in a kind.

use anyhow::Result;

use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, WithSql};

/// What `kind`'s SQL family makes of `what`: a future, failing when `kind` has no SQL
/// (`workload`: the kind that asks, for the message).
pub(crate) fn sql_family<'a, T: 'a, W: WithSql<Output = FamilyFuture<'a, Result<T>>>>(
    kind: ServerKind,
    workload: &'static str,
    what: W,
) -> FamilyFuture<'a, Result<T>> {
    match kind.with_sql(what) {
        Some(future) => future,
        None => Box::pin(async move {
            anyhow::bail!("{workload} does not speak to {} servers", kind.name())
        }),
    }
}
