//! Pure expansion of a matrix into cells, grouped by deployment (server x config), in a
//! pinned order: server, config, engine, workload, concurrency, rate.

use super::model::{Matrix, Selector};
pub use crate::model::cell::{slug, Cell};
use crate::servers::dataset::Layout;

/// Whether `cell` matches every dimension of `sel` (names were checked when the matrix or
/// `--only` was read).
pub(crate) fn matches(cell: &Cell, sel: &Selector) -> bool {
    sel.iter()
        .all(|(dim, values)| cell.get_named(dim).is_some_and(|v| values.0.contains(&v)))
}

/// Assumed prepare rate (oltp rows loaded per second, indexes included), for estimates
/// only: scripts/bench/prepare-vs-sysbench.sh measures it (docs/datasets.md).
pub(crate) const ASSUMED_PREPARE_ROWS_PER_S: f64 = 150_000.0;
/// Assumed rate at which a kept data set is copied and checked, in rows per second.
pub(crate) const ASSUMED_RESTORE_ROWS_PER_S: f64 = 1_000_000.0;

/// One server started with one config, and the cells run against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) cells: Vec<Cell>,
}

impl Deployment {
    /// The tables its cells load before they measure, each schema once (`Driver::data_layout`),
    /// or why it can keep no data set of them.
    pub(crate) fn layouts(&self, m: &Matrix) -> Result<Vec<Layout>, String> {
        let mut out: Vec<Layout> = Vec::new();
        for c in &self.cells {
            let Some(l) = m.workloads[&c.workload].data_layout(c.engine.as_deref()) else {
                continue;
            };
            match out.iter().find(|o| o.db == l.db) {
                Some(o) if o.signature != l.signature => {
                    return Err(format!(
                        "two of its workloads load different tables into schema {} (give \
                         each its own `db`)",
                        crate::escape::terminal(&l.db)
                    ))
                }
                Some(_) => {}
                None => out.push(l),
            }
        }
        match out.is_empty() {
            true => Err("none of its workloads prepares tables".into()),
            false => Ok(out),
        }
    }

    /// Directory-safe name used inside the run directory.
    pub fn slug(&self) -> String {
        slug(&format!("{}__{}", self.server, self.config))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub(crate) deployments: Vec<Deployment>,
}

impl Plan {
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.deployments.iter().flat_map(|d| d.cells.iter())
    }
    pub fn cell_count(&self) -> usize {
        self.deployments.iter().map(|d| d.cells.len()).sum()
    }
}

/// Expand the cross product, drop excluded cells, keep only included ones (when `include`
/// is given) and those matching every `only` selector (from `--only KEY=VALUE`).
pub fn expand(m: &Matrix, only: &[Selector]) -> Plan {
    // Rates by value; a closed loop has none.
    let rates: Vec<Option<u32>> = match &m.load.rate {
        Some(r) => {
            let mut r = r.clone();
            r.sort_unstable();
            r.into_iter().map(Some).collect()
        }
        None => vec![None],
    };
    // The workloads without an engine first, then each engine's: made in the pinned order
    // (no sort, whose key would look each value up on its axis: quadratic on a long axis).
    let engines = std::iter::once(None).chain(m.engines.iter().map(Some));
    let order: Vec<(Option<&String>, &String)> = engines
        .flat_map(|e| {
            (m.workloads.iter())
                .filter(move |(_, w)| w.uses_engine() == e.is_some())
                .map(move |(name, _)| (e, name))
        })
        .collect();
    let mut deployments = Vec::new();
    for server in m.servers.keys() {
        for config in m.configs.keys() {
            let mut cells = Vec::new();
            for &(engine, workload) in &order {
                for &concurrency in &m.concurrency {
                    for &rate in &rates {
                        let cell = Cell {
                            server: server.clone(),
                            config: config.clone(),
                            engine: engine.cloned(),
                            workload: workload.clone(),
                            concurrency,
                            rate,
                        };
                        let kept = !m.exclude.iter().any(|s| matches(&cell, s))
                            && (m.include.is_empty()
                                || m.include.iter().any(|s| matches(&cell, s)))
                            && only.iter().all(|s| matches(&cell, s));
                        if kept {
                            cells.push(cell);
                        }
                    }
                }
            }
            if !cells.is_empty() {
                deployments.push(Deployment {
                    server: server.clone(),
                    config: config.clone(),
                    cells,
                });
            }
        }
    }
    Plan { deployments }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(extra: &str) -> Matrix {
        let text = format!(
            "servers: {{a: {{image: x}}, b: {{image: y}}}}\n\
             configs: {{off: {{}}, on: {{mycnf: {{log_bin: 1}}}}}}\n\
             engines: [InnoDB, MyISAM]\n\
             workloads: {{w: {{slap: {{load_type: write}}}}, k: {{slap: {{load_type: key, primary_key: guid}}}}}}\n\
             concurrency: [1, 4]\nlength: 100\n{extra}"
        );
        crate::input::yaml::from_str(&text).unwrap()
    }

    #[test]
    fn cross_product_in_pinned_order() {
        let plan = expand(&matrix(""), &[]);
        assert_eq!(plan.deployments.len(), 4);
        assert_eq!(plan.cell_count(), 2 * 2 * 2 * 2 * 2);
        let first: Vec<String> = plan.deployments[0]
            .cells
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            first,
            [
                "a/off/InnoDB/w/c1",
                "a/off/InnoDB/w/c4",
                "a/off/InnoDB/k/c1",
                "a/off/InnoDB/k/c4",
                "a/off/MyISAM/w/c1",
                "a/off/MyISAM/w/c4",
                "a/off/MyISAM/k/c1",
                "a/off/MyISAM/k/c4",
            ]
        );
        let deps: Vec<(String, String)> = plan
            .deployments
            .iter()
            .map(|d| (d.server.clone(), d.config.clone()))
            .collect();
        assert_eq!(deps[1], ("a".to_string(), "on".to_string()));
        assert_eq!(deps[2], ("b".to_string(), "off".to_string()));
    }

    #[test]
    fn exclude_include_and_only() {
        let m = matrix("exclude:\n  - {engine: MyISAM, workload: k}\n  - {server: b, config: on}\ninclude:\n  - {concurrency: 4}\n");
        let plan = expand(&m, &[]);
        assert_eq!(plan.deployments.len(), 3, "b/on is excluded whole");
        assert!(plan.cells().all(|c| c.concurrency == 4));
        assert!(!plan
            .cells()
            .any(|c| c.engine.as_deref() == Some("MyISAM") && c.workload == "k"));
        assert_eq!(plan.cell_count(), 3 * 3);

        let only: Selector = crate::input::yaml::from_str("{server: a, engine: InnoDB}").unwrap();
        let plan = expand(&m, &[only]);
        assert_eq!(plan.cell_count(), 2 * 2);
    }
}
