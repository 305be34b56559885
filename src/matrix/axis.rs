//! The values of each dimension in the matrix's order: what `--only`, `exclude`/`include`
//! and `report.baseline` may name, and the order of rows and columns in the pivots.

use super::model::Matrix;
use crate::model::Dimension;

impl Matrix {
    /// The values of `dim` as strings, in the order the matrix lists them (a closed loop has
    /// no rate).
    pub(crate) fn axis(&self, dim: Dimension) -> Vec<String> {
        match dim {
            Dimension::Server => self.servers.keys().cloned().collect(),
            Dimension::Config => self.configs.keys().cloned().collect(),
            Dimension::Engine => self.engines.clone(),
            Dimension::Workload => self.workloads.keys().cloned().collect(),
            Dimension::Concurrency => self.concurrency.iter().map(u32::to_string).collect(),
            Dimension::Rate => (self.load.rate.iter().flatten())
                .map(u32::to_string)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dimension_in_matrix_order() {
        let m: Matrix = crate::input::yaml::from_str(
            "servers: {b: {image: x}, a: {image: y}}\nconfigs: {on: {}, off: {}}\n\
             engines: [MyISAM, InnoDB]\nworkloads: {w: {redis: {test: get}}}\n\
             concurrency: [4, 1]\nload: {rate: [2000, 500]}\nlength: 10s\n",
        )
        .unwrap();
        let axes = Dimension::ALL.map(|d| m.axis(d).join(","));
        assert_eq!(
            axes,
            ["b,a", "on,off", "MyISAM,InnoDB", "w", "4,1", "2000,500"]
        );
        let closed: Matrix = crate::input::yaml::from_str(
            "servers: {a: {image: y}}\nworkloads: {w: {slap: {}}}\nlength: 10\n",
        )
        .unwrap();
        assert!(closed.axis(Dimension::Rate).is_empty());
    }
}
