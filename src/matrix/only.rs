//! `--only KEY=VALUE`: selectors of a matrix's cells, each value checked against its axis.

use anyhow::Result;

use crate::error::UsageError;
use crate::matrix::model::{OneOrMany, Selector};
use crate::matrix::LoadedMatrix;
use crate::model::Dimension;

/// Selectors from `--only` texts, their dimension names checked (not yet their values).
pub(crate) fn only_selectors(only: &[String]) -> Result<Vec<Selector>> {
    only.iter()
        .map(|o| {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--only takes KEY=VALUE, got `{o}`")))?;
            if Dimension::parse(k).is_none() {
                return Err(UsageError(format!(
                    "--only: unknown dimension `{k}`; valid: {}",
                    Dimension::choices()
                ))
                .into());
            }
            let values = v.split(',').map(|s| s.trim().to_string()).collect();
            Ok(Selector::from([(k.to_string(), OneOrMany(values))]))
        })
        .collect()
}

/// `--only KEY=VALUE` as selectors, each value checked against the matrix's axis.
pub(crate) fn parse_only(loaded: &LoadedMatrix, only: &[String]) -> Result<Vec<Selector>> {
    let selectors = only_selectors(only)?;
    for sel in &selectors {
        for (dim, values) in sel {
            // Names were checked by `only_selectors`.
            let axis = (Dimension::parse(dim).map(|d| loaded.matrix.axis(d))).unwrap_or_default();
            if let Some(bad) = values.0.iter().find(|v| !axis.contains(v)) {
                return Err(UsageError(format!(
                    "--only: unknown {dim} `{bad}`; valid choices: {}",
                    axis.join(", ")
                ))
                .into());
            }
        }
    }
    // Each value exists, yet together they may match nothing (`--only engine=MyISAM` where
    // every MyISAM cell is excluded): an empty run is an error, not a success.
    if !selectors.is_empty()
        && crate::matrix::plan::expand(&loaded.matrix, &selectors).cell_count() == 0
    {
        return Err(UsageError(format!(
            "--only {} keeps no cell of the matrix: nothing would run",
            only.join(" --only ")
        ))
        .into());
    }
    Ok(selectors)
}
