//! What a cell is: one value on each dimension of a matrix. The same identity names a cell
//! in the plan, in results.csv, in joins between runs and on the command line (`--only`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The dimensions a cell is identified by, in column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    Server,
    Config,
    Engine,
    Workload,
    Concurrency,
    /// Open loop's target arrivals per second (empty in closed loop).
    Rate,
}

impl Dimension {
    pub(crate) const ALL: [Dimension; 6] = [
        Dimension::Server,
        Dimension::Config,
        Dimension::Engine,
        Dimension::Workload,
        Dimension::Concurrency,
        Dimension::Rate,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Dimension::Server => "server",
            Dimension::Config => "config",
            Dimension::Engine => "engine",
            Dimension::Workload => "workload",
            Dimension::Concurrency => "concurrency",
            Dimension::Rate => "rate",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.name() == name)
    }

    /// "server, config, engine, workload, concurrency, rate", for messages.
    pub(crate) fn choices() -> String {
        Dimension::ALL.map(Dimension::name).join(", ")
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    pub server: String,
    pub config: String,
    /// None when the workload does not create tables (the engine axis does not apply).
    pub engine: Option<String>,
    pub workload: String,
    pub concurrency: u32,
    /// Open loop's target arrivals per second; None in closed loop.
    pub rate: Option<u32>,
}

impl Cell {
    pub(crate) fn get(&self, dim: Dimension) -> String {
        match dim {
            Dimension::Server => self.server.clone(),
            Dimension::Config => self.config.clone(),
            Dimension::Engine => self.engine.clone().unwrap_or_default(),
            Dimension::Workload => self.workload.clone(),
            Dimension::Concurrency => self.concurrency.to_string(),
            Dimension::Rate => self.rate.map(|r| r.to_string()).unwrap_or_default(),
        }
    }

    /// The value on a dimension named in the user's words; None for an unknown name.
    pub(crate) fn get_named(&self, dim: &str) -> Option<String> {
        Dimension::parse(dim).map(|d| self.get(d))
    }

    pub(crate) fn key(&self) -> CellKey {
        CellKey::of(|d| self.get(d))
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.server, self.config)?;
        if let Some(e) = &self.engine {
            write!(f, "/{e}")?;
        }
        write!(f, "/{}/c{}", self.workload, self.concurrency)?;
        if let Some(r) = self.rate {
            write!(f, "/r{r}")?;
        }
        Ok(())
    }
}

/// A cell's identity for resume and joins: its values on every dimension, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey(String);

impl CellKey {
    /// The key of whatever answers each dimension (a planned cell, a results row). A closed
    /// loop's empty rate is left out, so that keys of runs from before rates still join.
    pub(crate) fn of(value: impl Fn(Dimension) -> String) -> CellKey {
        CellKey::over(Dimension::ALL, value)
    }

    /// The key on `dims` only, in their order (a comparison's dimensions left after
    /// `--ignore`, so that cells differing only on the ignored ones join); an empty rate is
    /// left out as in `of`.
    pub(crate) fn over(
        dims: impl IntoIterator<Item = Dimension>,
        value: impl Fn(Dimension) -> String,
    ) -> CellKey {
        let values: Vec<String> = (dims.into_iter())
            .map(|d| (d, value(d)))
            .filter(|(d, v)| *d != Dimension::Rate || !v.is_empty())
            .map(|(_, v)| v)
            .collect();
        CellKey(values.join("|"))
    }

    /// The key of a stored line's cell columns (samples.csv, counters.csv).
    pub(crate) fn of_columns(
        server: &str,
        config: &str,
        engine: &str,
        workload: &str,
        concurrency: u32,
        rate: Option<u32>,
    ) -> CellKey {
        CellKey::of(|d| match d {
            Dimension::Server => server.to_string(),
            Dimension::Config => config.to_string(),
            Dimension::Engine => engine.to_string(),
            Dimension::Workload => workload.to_string(),
            Dimension::Concurrency => concurrency.to_string(),
            Dimension::Rate => rate.map(|r| r.to_string()).unwrap_or_default(),
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CellKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A directory- and tag-safe form of a name: anything but `[A-Za-z0-9._-]` becomes `_`.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_round_trip_and_keys_join_in_column_order() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::parse(d.name()), Some(d));
        }
        assert_eq!(Dimension::parse("engines"), None);
        let c = Cell {
            server: "s".into(),
            config: "c".into(),
            engine: None,
            workload: "w".into(),
            concurrency: 4,
            rate: None,
        };
        assert_eq!(c.key().as_str(), "s|c||w|4");
        let open = Cell {
            rate: Some(500),
            ..c.clone()
        };
        assert_eq!(open.key().as_str(), "s|c||w|4|500");
        let kept = [Dimension::Server, Dimension::Workload, Dimension::Rate];
        assert_eq!(CellKey::over(kept, |d| open.get(d)).as_str(), "s|w|500");
        assert_eq!(CellKey::over(kept, |d| c.get(d)).as_str(), "s|w");
        assert_eq!(open.to_string(), "s/c/w/c4/r500");
        assert_eq!(c.get_named("concurrency").as_deref(), Some("4"));
        assert_eq!(slug("a b/c"), "a_b_c");
    }
}
