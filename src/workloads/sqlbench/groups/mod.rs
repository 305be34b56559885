//! One file per sql-bench test group: the operations it runs, in order, at a size. Each
//! follows its `test-<group>.sh` for MySQL (server-cfg's MySQL limits: 16 keys of up to 16
//! parts, 1,000,000-byte queries, multi-column ALTER, count(distinct), IN lists).

pub(crate) mod alter_table;
pub(crate) mod big_tables;
pub(crate) mod connect;
pub(crate) mod create;
pub(crate) mod insert;
pub(crate) mod select;
pub(crate) mod transactions;
pub(crate) mod wisconsin;

use super::plan::Op;
use super::{Group, SqlbenchSpec};

/// The operations of `group` as `spec` sizes and sends them, creating tables with `engine`.
pub fn plan(group: Group, spec: &SqlbenchSpec, engine: &str) -> Vec<Op> {
    let size = spec.size();
    match group {
        Group::AlterTable => alter_table::plan(size, engine),
        Group::BigTables => big_tables::plan(size, engine),
        Group::Connect => connect::plan(size, engine),
        Group::Create => create::plan(size, engine),
        Group::Insert => insert::plan(size, spec.prepare, engine),
        Group::Select => select::plan(size, engine),
        Group::Transactions => transactions::plan(size, engine),
        Group::Wisconsin => wisconsin::plan(size, engine),
    }
}

#[cfg(test)]
pub(crate) mod expect {
    //! The originals' counts, for the groups' tests.
    use super::super::plan::Op;

    /// Each (name, loops, statements) in order, setup left out.
    pub(crate) fn ops(ops: &[Op]) -> Vec<(&'static str, u64, usize)> {
        ops.iter()
            .filter(|o| !o.is_setup())
            .map(|o| (o.name, o.loops, o.steps.len()))
            .collect()
    }
}
