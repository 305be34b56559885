//! `sqlbench: {groups: [...], small_test: true, scale: 1.0, transport: unix, prepare:
//! emulated}`: which test groups run, at what size, and how the client reaches the server.

use serde::{Deserialize, Serialize};

use crate::workloads::Problem;

/// The sql-bench options: the test groups, in the order given, and their size.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlbenchSpec {
    /// The test groups to run, in this order (default: all of them, in run-all-tests order).
    #[serde(default = "all_groups")]
    pub groups: Vec<Group>,
    /// sql-bench's `--small-test`: the loop counts each group divides for a quick run.
    #[serde(default)]
    pub small_test: bool,
    /// A factor on every loop count (after `small_test`); table shapes stay as they are.
    #[serde(default = "one")]
    pub scale: f64,
    /// How the client connects: the server's unix socket (sql-bench's default, `localhost`)
    /// or TCP (its `--tcpip`, which caps test-connect's loops).
    #[serde(default)]
    pub transport: Transport,
    /// How `prepared_select` and `once_prepared_select` prepare: on the client as
    /// DBD::MariaDB does by default, or on the server.
    #[serde(default)]
    pub prepare: Prepare,
}

/// `transport`: how the suite's connections reach the server.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// The server's unix socket, shared from its container: sql-bench's default (host
    /// `localhost`, which the client library reaches through the socket).
    #[default]
    Unix,
    /// TCP to 127.0.0.1, with sql-bench's `--tcpip` caps on test-connect's loops.
    Tcp,
}

/// `prepare`: what `$dbh->prepare` and `$sth->execute` send.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Prepare {
    /// DBD::MariaDB's default (no `mariadb_server_prepare`): nothing at prepare, one text
    /// query per execute with the bound value quoted as a string.
    #[default]
    Emulated,
    /// COM_STMT_PREPARE, COM_STMT_EXECUTE and COM_STMT_CLOSE, as `mariadb_server_prepare=1`.
    Server,
}

impl Default for SqlbenchSpec {
    fn default() -> Self {
        crate::input::yaml::from_str("{}")
            .expect("invariant: every SqlbenchSpec field has a default")
    }
}

/// The largest `scale`: beyond it the keys some groups write no longer fit their columns
/// (test-insert's `mediumint` and `smallint` fields), and a run would take days.
pub(crate) const MAX_SCALE: f64 = 10.0;

impl SqlbenchSpec {
    pub fn size(&self) -> Size {
        Size {
            small: self.small_test,
            scale: self.scale,
            tcpip: self.transport == Transport::Tcp,
        }
    }

    /// The checks types cannot express (`Driver::check`).
    pub(crate) fn validate(&self) -> Result<(), Problem> {
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= MAX_SCALE) {
            return Err(Problem::at(
                "scale",
                format!("scale must be above 0 and at most {MAX_SCALE}"),
            ));
        }
        if self.groups.is_empty() {
            return Err(Problem::at("groups", "name at least one test group"));
        }
        if let Some(i) = crate::input::repeats::first_repeat(&self.groups) {
            return Err(Problem::at(
                &format!("groups[{i}]"),
                format!("test group `{}` is listed twice", self.groups[i].name()),
            ));
        }
        Ok(())
    }
}

impl SqlbenchSpec {
    /// `validate` as the schema says it.
    pub(crate) fn validate_rules() -> Vec<crate::workloads::SchemaRule> {
        vec![
            (
                "scale",
                serde_json::json!({"exclusiveMinimum": 0, "maximum": MAX_SCALE}),
            ),
            (
                "groups",
                serde_json::json!({"minItems": 1, "uniqueItems": true}),
            ),
        ]
    }
}

fn one() -> f64 {
    1.0
}

fn all_groups() -> Vec<Group> {
    Group::ALL.to_vec()
}

/// sql-bench's test groups (one `test-<name>.sh` each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    AlterTable,
    BigTables,
    Connect,
    Create,
    Insert,
    Select,
    Transactions,
    Wisconsin,
}

impl Group {
    /// run-all-tests' order (alphabetical, as its directory listing).
    pub const ALL: [Group; 8] = [
        Group::AlterTable,
        Group::BigTables,
        Group::Connect,
        Group::Create,
        Group::Insert,
        Group::Select,
        Group::Transactions,
        Group::Wisconsin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::AlterTable => "alter-table",
            Group::BigTables => "big-tables",
            Group::Connect => "connect",
            Group::Create => "create",
            Group::Insert => "insert",
            Group::Select => "select",
            Group::Transactions => "transactions",
            Group::Wisconsin => "wisconsin",
        }
    }
}

/// How big a run is: `--small-test`, the scale factor on loop counts, and `--tcpip` (which
/// caps test-connect's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    pub(crate) small: bool,
    pub(crate) scale: f64,
    pub(crate) tcpip: bool,
}

impl Size {
    #[cfg(test)]
    pub(crate) const FULL: Size = Size {
        small: false,
        scale: 1.0,
        tcpip: false,
    };
    #[cfg(test)]
    pub(crate) const SMALL: Size = Size {
        small: true,
        scale: 1.0,
        tcpip: false,
    };

    /// `normal`, or `normal / small_div` with `small_test` (integer division, as the
    /// originals' counts all divide evenly), times the scale; at least 1.
    pub(crate) fn count(&self, normal: u64, small_div: u64) -> u64 {
        let base = if self.small {
            normal / small_div
        } else {
            normal
        };
        ((base as f64 * self.scale).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_divide_then_scale() {
        assert_eq!(Size::FULL.count(100_000, 100), 100_000);
        assert_eq!(Size::SMALL.count(100_000, 100), 1000);
        let tiny = Size {
            scale: 0.001,
            ..Size::SMALL
        };
        assert_eq!(tiny.count(100_000, 100), 1, "never below one loop");
    }

    #[test]
    fn options_and_checks() {
        let s: SqlbenchSpec =
            crate::input::yaml::from_str("{groups: [connect, alter-table], scale: 0.5}").unwrap();
        assert_eq!(s.groups, [Group::Connect, Group::AlterTable]);
        assert!(s.validate().is_ok());
        assert_eq!(SqlbenchSpec::default().groups.len(), 8);
        // The originals' defaults: the socket (host localhost) and DBD's emulated prepare.
        assert_eq!(SqlbenchSpec::default().transport, Transport::Unix);
        assert_eq!(SqlbenchSpec::default().prepare, Prepare::Emulated);
        assert!(!SqlbenchSpec::default().size().tcpip);
        let tcp: SqlbenchSpec =
            crate::input::yaml::from_str("{transport: tcp, prepare: server}").unwrap();
        assert!(tcp.size().tcpip);
        assert_eq!(tcp.prepare, Prepare::Server);
        for bad in [
            "{scale: 0}",
            "{scale: -1}",
            "{scale: 11}",
            "{groups: []}",
            "{groups: [insert, insert]}",
        ] {
            let s: SqlbenchSpec = crate::input::yaml::from_str(bad).unwrap();
            assert!(s.validate().is_err(), "{bad}");
        }
    }
}
