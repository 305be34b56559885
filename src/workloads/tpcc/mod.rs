//! `tpcc`: TPC-C's five transactions (clause 2) on any SQL family, TPROC-C style (keying and
//! think times off unless asked): the nine tables (`schema`), the initial database
//! (`load`), the random values (`rand`), the mix as a deck (`mix`), the statements
//! (`statements`) and the transactions (`txn`) through the family's `SqlClient`, and the
//! consistency conditions checked after a run (`check`).

pub(crate) mod check;
pub(crate) mod driver;
pub(crate) mod load;
pub(crate) mod mix;
pub(crate) mod prepare;
pub(crate) mod rand;
pub(crate) mod schema;
pub(crate) mod spec;
pub(crate) mod statements;
pub(crate) mod terminal;
pub(crate) mod txn;

pub use driver::{check_database, prepare_database};
pub use spec::TpccSpec;
