//! The initial database of clause 4.3.3.1, generated warehouse by warehouse as multi-row
//! INSERT statements: the items once, then each warehouse with its stock, districts,
//! customers and their history, orders with their lines, and the undelivered orders. The
//! texts are portable SQL (generated values are alphanumeric; timestamps are the server's
//! CURRENT_TIMESTAMP), handed to a `Sink` (a family's client connection, or a test's list).

use std::fmt::Write;

use anyhow::Result;
use rand::Rng;

use super::rand::{
    a_string, data_with_original, last_name, load_last_number, n_string, permutation, zip,
    Constants,
};
use crate::servers::sql::decimal;

/// Items in the catalogue, stock rows per warehouse (4.3.3.1).
pub(crate) const ITEMS: u32 = 100_000;
pub(crate) const DISTRICTS: u32 = 10;
pub(crate) const CUSTOMERS: u32 = 3_000;
/// Orders per district at load; those from this id on are not delivered yet.
pub(crate) const ORDERS: u32 = 3_000;
pub(crate) const FIRST_UNDELIVERED: u32 = 2_101;
/// About how many rows a warehouse holds once loaded (stock, customers, history, orders,
/// about 300,000 order lines, new orders), for a kept data set's size.
pub(crate) const ROWS_PER_WAREHOUSE: u64 = 100_000 + 4 * 30_000 + 300_000 + 9_000;
/// About how many of those rows a second a server loads, for estimates only: wider rows
/// than oltp's (a customer row is about 700 bytes). Measured on this 2-core host with the
/// default `load_threads` (docs/tpcc.md).
pub(crate) const ASSUMED_LOAD_ROWS_PER_S: u32 = 60_000;
/// Rows a statement carries: large enough that round trips do not bound the load, small
/// enough to stay far under a server's packet limit (a customer row is about 700 bytes).
const ROWS_PER_STATEMENT: usize = 500;

/// Where the statements go.
pub(crate) trait Sink {
    fn send(&mut self, sql: &str) -> Result<()>;
}

/// One table's rows gathered into statements of `ROWS_PER_STATEMENT`.
struct Batch<'s, S: Sink> {
    sink: &'s mut S,
    head: String,
    sql: String,
    rows: usize,
}

impl<'s, S: Sink> Batch<'s, S> {
    fn new(sink: &'s mut S, table: &str) -> Batch<'s, S> {
        let head = format!("INSERT INTO {table} VALUES ");
        Batch {
            sink,
            sql: head.clone(),
            head,
            rows: 0,
        }
    }

    /// A row's values, written by `values` inside its parentheses.
    fn row(&mut self, values: impl FnOnce(&mut String)) -> Result<()> {
        if self.rows > 0 {
            self.sql.push(',');
        }
        self.sql.push('(');
        values(&mut self.sql);
        self.sql.push(')');
        self.rows += 1;
        if self.rows == ROWS_PER_STATEMENT {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows > 0 {
            self.sink.send(&self.sql)?;
            self.sql.clear();
            self.sql.push_str(&self.head);
            self.rows = 0;
        }
        Ok(())
    }
}

/// The catalogue: items 1..=100,000.
pub(crate) fn items(rng: &mut impl Rng, sink: &mut impl Sink) -> Result<()> {
    let mut b = Batch::new(sink, "item");
    for i in 1..=ITEMS {
        let (im, name) = (rng.random_range(1..=10_000), a_string(rng, 14, 24));
        let (price, data) = (rng.random_range(100..=10_000), data_with_original(rng));
        b.row(|s| {
            let _ = write!(s, "{i},{im},'{name}',{},'{data}'", decimal(price, 2));
        })?;
    }
    b.flush()
}

/// A warehouse's name and address columns (name, two streets, city, state, zip), quoted.
fn place(rng: &mut impl Rng) -> String {
    format!(
        "'{}','{}','{}','{}','{}','{}'",
        a_string(rng, 6, 10),
        a_string(rng, 10, 20),
        a_string(rng, 10, 20),
        a_string(rng, 10, 20),
        a_string(rng, 2, 2),
        zip(rng)
    )
}

/// Warehouse `w`: its row, its stock, and its ten districts with everything in them.
pub(crate) fn warehouse(
    w: u32,
    c: &Constants,
    rng: &mut impl Rng,
    sink: &mut impl Sink,
) -> Result<()> {
    let tax = decimal(rng.random_range(0..=2_000), 4);
    let row = format!(
        "INSERT INTO warehouse VALUES ({w},{},{tax},300000.00)",
        place(rng)
    );
    sink.send(&row)?;
    stock(w, rng, sink)?;
    for d in 1..=DISTRICTS {
        let tax = decimal(rng.random_range(0..=2_000), 4);
        let row = format!(
            "INSERT INTO district VALUES ({d},{w},{},{tax},30000.00,{})",
            place(rng),
            ORDERS + 1
        );
        sink.send(&row)?;
        customers(w, d, c, rng, sink)?;
        orders(w, d, rng, sink)?;
    }
    Ok(())
}

fn stock(w: u32, rng: &mut impl Rng, sink: &mut impl Sink) -> Result<()> {
    let mut b = Batch::new(sink, "stock");
    for i in 1..=ITEMS {
        let quantity = rng.random_range(10..=100);
        let dists: Vec<String> = (0..10).map(|_| a_string(rng, 24, 24)).collect();
        let data = data_with_original(rng);
        b.row(|s| {
            let _ = write!(s, "{i},{w},{quantity}");
            for d in &dists {
                let _ = write!(s, ",'{d}'");
            }
            let _ = write!(s, ",0,0,0,'{data}'");
        })?;
    }
    b.flush()
}

/// District `d`'s customers, and a history row each.
fn customers(
    w: u32,
    d: u32,
    c: &Constants,
    rng: &mut impl Rng,
    sink: &mut impl Sink,
) -> Result<()> {
    let mut rows = Vec::with_capacity(CUSTOMERS as usize);
    for id in 1..=CUSTOMERS {
        let last = last_name(load_last_number(rng, c, id));
        let credit = if rng.random_range(0..10) == 0 {
            "BC"
        } else {
            "GC"
        };
        let discount = decimal(rng.random_range(0..=5_000), 4);
        let first = a_string(rng, 8, 16);
        let streets = [a_string(rng, 10, 20), a_string(rng, 10, 20)];
        let (city, state, zip) = (a_string(rng, 10, 20), a_string(rng, 2, 2), zip(rng));
        let (phone, data) = (n_string(rng, 16, 16), a_string(rng, 300, 500));
        rows.push(format!(
            "{id},{d},{w},'{first}','OE','{last}','{}','{}','{city}','{state}','{zip}',\
             '{phone}',CURRENT_TIMESTAMP,'{credit}',50000.00,{discount},-10.00,10.00,1,0,\
             '{data}'",
            streets[0], streets[1]
        ));
    }
    let mut b = Batch::new(sink, "customer");
    for r in rows {
        b.row(|s| s.push_str(&r))?;
    }
    b.flush()?;
    let mut b = Batch::new(sink, "history");
    for id in 1..=CUSTOMERS {
        let data = a_string(rng, 12, 24);
        b.row(|s| {
            let _ = write!(s, "{id},{d},{w},{d},{w},CURRENT_TIMESTAMP,10.00,'{data}'");
        })?;
    }
    b.flush()
}

/// District `d`'s orders (customers in a random order), their lines, and the undelivered
/// ones' new_order rows.
fn orders(w: u32, d: u32, rng: &mut impl Rng, sink: &mut impl Sink) -> Result<()> {
    let customers = permutation(rng, ORDERS);
    let counts: Vec<u32> = (0..ORDERS).map(|_| rng.random_range(5..=15)).collect();
    let mut b = Batch::new(sink, "orders");
    for o in 1..=ORDERS {
        let delivered = o < FIRST_UNDELIVERED;
        let carrier = match delivered {
            true => rng.random_range(1..=10).to_string(),
            false => "NULL".to_string(),
        };
        let (customer, lines) = (customers[o as usize - 1], counts[o as usize - 1]);
        b.row(|s| {
            let _ = write!(
                s,
                "{o},{d},{w},{customer},CURRENT_TIMESTAMP,{carrier},{lines},1"
            );
        })?;
    }
    b.flush()?;
    let mut b = Batch::new(sink, "order_line");
    for o in 1..=ORDERS {
        let delivered = o < FIRST_UNDELIVERED;
        for n in 1..=counts[o as usize - 1] {
            let item = rng.random_range(1..=ITEMS);
            let (when, amount) = match delivered {
                true => ("CURRENT_TIMESTAMP", 0),
                false => ("NULL", rng.random_range(1..=999_999)),
            };
            let info = a_string(rng, 24, 24);
            b.row(|s| {
                let amount = decimal(amount, 2);
                let _ = write!(s, "{o},{d},{w},{n},{item},{w},{when},5,{amount},'{info}'");
            })?;
        }
    }
    b.flush()?;
    let mut b = Batch::new(sink, "new_order");
    for o in FIRST_UNDELIVERED..=ORDERS {
        b.row(|s| {
            let _ = write!(s, "{o},{d},{w}");
        })?;
    }
    b.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;
    use std::collections::BTreeMap;

    /// Rows per table, counted from the statements.
    #[derive(Default)]
    struct Counted(BTreeMap<String, usize>, usize);

    impl Sink for Counted {
        fn send(&mut self, sql: &str) -> Result<()> {
            let table = sql["INSERT INTO ".len()..].split(' ').next().unwrap();
            // Rows: top-level "(" after VALUES.
            let values = &sql[sql.find(" VALUES ").unwrap() + 8..];
            let (mut depth, mut rows, mut quoted) = (0, 0, false);
            for ch in values.chars() {
                match ch {
                    '\'' => quoted = !quoted,
                    '(' if !quoted => {
                        if depth == 0 {
                            rows += 1;
                        }
                        depth += 1;
                    }
                    ')' if !quoted => depth -= 1,
                    _ => {}
                }
            }
            *self.0.entry(table.to_string()).or_default() += rows;
            self.1 = self.1.max(sql.len());
            Ok(())
        }
    }

    #[test]
    fn decimals_are_written_exactly() {
        assert_eq!(decimal(123_456, 2), "1234.56");
        assert_eq!(decimal(5, 2), "0.05");
        assert_eq!(decimal(-1000, 2), "-10.00");
        assert_eq!(decimal(2_000, 4), "0.2000");
        assert_eq!(decimal(0, 4), "0.0000");
    }

    #[test]
    fn a_warehouse_has_the_specifications_cardinalities() {
        let mut rng = SmallRng::seed_from_u64(9);
        let c = Constants::draw(&mut rng);
        let mut n = Counted::default();
        items(&mut rng, &mut n).unwrap();
        warehouse(1, &c, &mut rng, &mut n).unwrap();
        let rows = |t: &str| n.0[t];
        assert_eq!(rows("item"), 100_000);
        assert_eq!(rows("warehouse"), 1);
        assert_eq!(rows("stock"), 100_000);
        assert_eq!(rows("district"), 10);
        assert_eq!(rows("customer"), 30_000);
        assert_eq!(rows("history"), 30_000);
        assert_eq!(rows("orders"), 30_000);
        assert_eq!(rows("new_order"), 9_000);
        // 5..=15 lines an order, 10 on average.
        assert!(
            (290_000..310_000).contains(&rows("order_line")),
            "{}",
            rows("order_line")
        );
        assert!(n.1 < 1 << 20, "largest statement {} bytes", n.1);
    }
}
