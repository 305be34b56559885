//! `sqlbench: {groups: [...], small_test: true, scale: 1.0}`: which test groups run and at
//! what size.

use serde::{Deserialize, Serialize};

use crate::workloads::Problem;

/// The sql-bench options: the test groups, in the order given, and their size.
#[derive(Debug, Clone, Deserialize, Serialize)]
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

fn one() -> f64 {
    1.0
}

fn all_groups() -> Vec<Group> {
    Group::ALL.to_vec()
}

/// sql-bench's test groups (one `test-<name>.sh` each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
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

/// How big a run is: `--small-test` and the scale factor on loop counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    pub(crate) small: bool,
    pub(crate) scale: f64,
}

impl Size {
    #[cfg(test)]
    pub(crate) const FULL: Size = Size {
        small: false,
        scale: 1.0,
    };
    #[cfg(test)]
    pub(crate) const SMALL: Size = Size {
        small: true,
        scale: 1.0,
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
            small: true,
            scale: 0.001,
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
