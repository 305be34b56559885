//! `tpcc: {...}`: the TPC-C transactions (TPROC-C style: keying and think times off unless
//! asked), its size in warehouses and its mix as weights.

use serde::{Deserialize, Serialize};

use crate::input::bounds::Bounded;

/// The share of each transaction in the mix, in percent (clause 5.2.3's minimums: Payment 43,
/// Order-Status, Delivery and Stock-Level 4 each, New-Order the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Weights {
    #[serde(default = "d_45")]
    pub new_order: u32,
    #[serde(default = "d_43")]
    pub payment: u32,
    #[serde(default = "d_4")]
    pub order_status: u32,
    #[serde(default = "d_4")]
    pub delivery: u32,
    #[serde(default = "d_4")]
    pub stock_level: u32,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            new_order: 45,
            payment: 43,
            order_status: 4,
            delivery: 4,
            stock_level: 4,
        }
    }
}

impl Weights {
    /// In `mix::Txn::ALL`'s order.
    pub(crate) fn cards(&self) -> [u32; 5] {
        [
            self.new_order,
            self.payment,
            self.order_status,
            self.delivery,
            self.stock_level,
        ]
    }
}

/// Keying and think times (clause 5.2.5): none, as TPROC-C, sysbench-tpcc, BenchBase and
/// go-tpc run by default, or the specification's.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Think {
    #[default]
    None,
    Spec,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpccSpec {
    /// The database's size: 10 districts, 30,000 customers and 100,000 stock rows each.
    #[serde(default = "d_1")]
    pub warehouses: u32,
    #[serde(default)]
    pub weights: Weights,
    #[serde(default)]
    pub think: Think,
    /// Connections loading warehouses in parallel.
    #[serde(default = "d_4")]
    pub load_threads: u32,
    /// The database (schema) holding the nine tables.
    #[serde(default = "d_db")]
    pub db: String,
    /// Storage engine of the tables where the family has them; an `engines` axis wins.
    #[serde(default = "d_innodb")]
    pub mysql_storage_engine: String,
    /// The consistency conditions 1-4 checked after the measured phase.
    #[serde(default = "d_true")]
    pub check: bool,
    /// 0 seeds from the clock.
    #[serde(default)]
    pub rand_seed: u64,
}

impl Default for TpccSpec {
    fn default() -> TpccSpec {
        TpccSpec {
            warehouses: 1,
            weights: Weights::default(),
            think: Think::None,
            load_threads: 4,
            db: d_db(),
            mysql_storage_engine: d_innodb(),
            check: true,
            rand_seed: 0,
        }
    }
}

impl TpccSpec {
    /// Every size with its range: warehouses a server loads in minutes to hours (about 80 MB
    /// each), and each weight a percentage.
    pub(crate) fn sizes(&self) -> [Bounded<'static>; 7] {
        let w = &self.weights;
        [
            ("warehouses", self.warehouses.into(), 1..=10_000),
            ("load_threads", self.load_threads.into(), 1..=256),
            ("weights.new_order", w.new_order.into(), 0..=100),
            ("weights.payment", w.payment.into(), 0..=100),
            ("weights.order_status", w.order_status.into(), 0..=100),
            ("weights.delivery", w.delivery.into(), 0..=100),
            ("weights.stock_level", w.stock_level.into(), 0..=100),
        ]
    }

    /// The weights must make a deck of 100 cards.
    pub(crate) fn weights_problem(&self) -> Option<String> {
        let sum: u32 = self.weights.cards().iter().sum();
        (sum != 100).then(|| {
            format!(
                "the weights add up to {sum}: they are percentages of the mix and must add up \
                 to 100 (the specification's: new_order 45, payment 43, order_status 4, \
                 delivery 4, stock_level 4)"
            )
        })
    }
}

fn d_1() -> u32 {
    1
}
fn d_4() -> u32 {
    4
}
fn d_43() -> u32 {
    43
}
fn d_45() -> u32 {
    45
}
fn d_true() -> bool {
    true
}
fn d_db() -> String {
    "tpcc".into()
}
fn d_innodb() -> String {
    "InnoDB".into()
}
