//! A client connection of any SQL family (`SqlClient`) with the test's statements prepared
//! for every table, as sysbench's thread_init does, and each event's statements executed
//! and counted as sysbench's drivers count them.

use anyhow::Result;

use crate::measure::interval::Counts;
use crate::servers::sql::{Failure, SqlClient};
use crate::servers::Endpoint;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::sql::{kinds, prepared_tables, Kind, Step};

pub(crate) struct Session<C: SqlClient> {
    client: C,
    /// Prepared statements indexed by `(table - 1) * Kind::COUNT + kind`.
    stmts: Vec<Option<C::Statement>>,
}

impl<C: SqlClient> Session<C> {
    /// Connect and prepare the test's statements for every table.
    pub(crate) fn open(endpoint: &Endpoint, spec: &OltpSpec) -> Result<Session<C>> {
        let tables = prepared_tables(spec);
        let kinds = kinds(spec);
        let mut client = C::open(endpoint, &spec.db, tables as usize * kinds.len())?;
        let mut stmts = Vec::new();
        stmts.resize_with(tables as usize * Kind::COUNT, || None);
        for t in 1..=tables {
            for &k in &kinds {
                let s = client.prepare(&k.sql(t, spec))?;
                stmts[(t as usize - 1) * Kind::COUNT + k.index()] = Some(s);
            }
        }
        Ok(Session { client, stmts })
    }

    pub(crate) fn client(&mut self) -> &mut C {
        &mut self.client
    }

    /// Execute one event's statements, classifying each as sysbench's driver does (a read
    /// returns rows, a write changes some, anything else is an other).
    pub(crate) fn execute(
        &mut self,
        plan: &mut Vec<Step>,
        st: &mut Counts,
    ) -> Result<(), (Failure, String)> {
        for step in plan.drain(..) {
            let res = match step {
                Step::Begin => self.client.begin(),
                Step::Commit => self.client.commit(),
                Step::Text(q) => self.client.text(&q),
                Step::Exec {
                    kind,
                    table,
                    params,
                } => {
                    let i = (table as usize - 1) * Kind::COUNT + kind.index();
                    let Some(stmt) = self.stmts.get(i).and_then(Option::as_ref) else {
                        return Err((Failure::Fatal, format!("{kind:?} is not prepared")));
                    };
                    self.client.exec(stmt, params)
                }
            };
            match res {
                Ok((true, _)) => st.reads += 1,
                Ok((false, n)) if n > 0 => st.writes += 1,
                Ok((false, _)) => st.others += 1,
                Err((Failure::Ignored, text)) => {
                    self.client.recover()?;
                    return Err((Failure::Ignored, text));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
