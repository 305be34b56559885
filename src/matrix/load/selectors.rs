//! The `exclude` and `include` rules, and any other place a dimension and its values are
//! named (`report.baseline`): each dimension known, each value on the matrix's axis.

use std::collections::HashSet;

use super::validator::choices;
use super::MatrixError;
use super::Validator;
use crate::escape::terminal;
use crate::matrix::model::Selector;
use crate::model::Dimension;

impl Validator<'_> {
    pub(super) fn check_rules(&self) -> Result<(), MatrixError> {
        for (i, sel) in self.m.exclude.iter().enumerate() {
            self.check_selector(sel, &format!("exclude[{i}]"))?;
        }
        for (i, sel) in self.m.include.iter().enumerate() {
            self.check_selector(sel, &format!("include[{i}]"))?;
        }
        Ok(())
    }

    pub(super) fn check_dim(&self, dim: &str, path: &str) -> Result<Dimension, MatrixError> {
        Dimension::parse(dim).ok_or_else(|| {
            self.err_at(
                self.spans.key(path),
                format!(
                    "unknown dimension `{}`; valid dimensions: {}",
                    terminal(dim),
                    Dimension::choices()
                ),
            )
        })
    }

    pub(super) fn check_value(
        &self,
        dim: Dimension,
        value: &str,
        path: &str,
    ) -> Result<(), MatrixError> {
        let axis = self.m.axis(dim);
        if axis.iter().any(|v| v == value) {
            return Ok(());
        }
        Err(self.err(
            path,
            format!(
                "unknown {dim} `{}`; valid choices: {}",
                terminal(value),
                choices(&axis)
            ),
        ))
    }

    fn check_selector(&self, sel: &Selector, path: &str) -> Result<(), MatrixError> {
        if sel.is_empty() {
            return Err(self.err(path, "an empty rule would match every cell".into()));
        }
        for (name, values) in sel {
            let p = format!("{path}.{name}");
            let dim = self.check_dim(name, &p)?;
            // The axis once per rule: a rule may list many of its values.
            let axis = self.m.axis(dim);
            let known: HashSet<&String> = axis.iter().collect();
            for (j, v) in values.0.iter().enumerate() {
                let vp = if values.0.len() > 1 {
                    format!("{p}[{j}]")
                } else {
                    p.clone()
                };
                if !known.contains(v) {
                    self.check_value(dim, v, &vp)?;
                }
            }
        }
        Ok(())
    }
}
