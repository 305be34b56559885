//! The five transactions (clause 2) on one connection of any SQL family: each drawn first
//! (`Input`, so that a retry after a deadlock or serialization failure repeats the same
//! transaction), then run statement by statement through the prepared texts of
//! `statements.rs`. Money is kept in hundredths, read back from DECIMAL columns as text.

use anyhow::Result;
use rand::Rng;

use super::load::{DISTRICTS, ITEMS};
use super::mix::Txn;
use super::rand::{last_name, nurand, Constants, A_C_ID, A_C_LAST, A_OL_I_ID};
use super::statements::{Class, Stmt};
use crate::servers::sql::{Cell, Failure, Param, Rows, SqlClient};

/// A step's failure, as the family's client classed it.
pub(crate) type Step<T> = std::result::Result<T, (Failure, String)>;

/// What one terminal works on (clause 2.4.1.1): its home warehouse for the run, the district
/// its Stock-Levels ask about, how many warehouses there are, the run's NURand constants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terminal {
    pub(crate) w: u32,
    pub(crate) stock_district: u32,
    pub(crate) warehouses: u32,
    pub(crate) c: Constants,
}

/// The statements a connection sent, by what the server's counters call them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) select: u64,
    pub(crate) update: u64,
    pub(crate) insert: u64,
    pub(crate) delete: u64,
    pub(crate) begin: u64,
    pub(crate) commit: u64,
    pub(crate) rollback: u64,
}

impl Sent {
    pub(crate) fn plus(&self, o: &Sent) -> Sent {
        Sent {
            select: self.select + o.select,
            update: self.update + o.update,
            insert: self.insert + o.insert,
            delete: self.delete + o.delete,
            begin: self.begin + o.begin,
            commit: self.commit + o.commit,
            rollback: self.rollback + o.rollback,
        }
    }

    /// Every statement.
    pub(crate) fn total(&self) -> u64 {
        self.select
            + self.update
            + self.insert
            + self.delete
            + self.begin
            + self.commit
            + self.rollback
    }

    /// What was sent after `before` was taken.
    pub(crate) fn since(&self, before: &Sent) -> Sent {
        Sent {
            select: self.select - before.select,
            update: self.update - before.update,
            insert: self.insert - before.insert,
            delete: self.delete - before.delete,
            begin: self.begin - before.begin,
            commit: self.commit - before.commit,
            rollback: self.rollback - before.rollback,
        }
    }
}

/// A connection with every statement of the run prepared.
pub(crate) struct Session<C: SqlClient> {
    client: C,
    prepared: Vec<C::Statement>,
    pub(crate) sent: Sent,
}

impl<C: SqlClient> Session<C> {
    pub(crate) fn new(mut client: C) -> Result<Session<C>> {
        let prepared = (Stmt::ALL.iter())
            .map(|s| client.prepare(s.sql()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Session {
            client,
            prepared,
            sent: Sent::default(),
        })
    }

    /// The connection, for what the driver asks beside the transactions.
    pub(crate) fn client(&mut self) -> &mut C {
        &mut self.client
    }

    fn count(&mut self, s: Stmt) {
        let n = match s.class() {
            Class::Select => &mut self.sent.select,
            Class::Update => &mut self.sent.update,
            Class::Insert => &mut self.sent.insert,
            Class::Delete => &mut self.sent.delete,
        };
        *n += 1;
    }

    /// A write; the rows it changed.
    fn exec(&mut self, s: Stmt, params: Vec<Param>) -> Step<u64> {
        self.count(s);
        let (_, changed) = self.client.exec(&self.prepared[s.index()], params)?;
        Ok(changed)
    }

    /// A read's rows.
    fn rows(&mut self, s: Stmt, params: Vec<Param>) -> Step<Rows> {
        self.count(s);
        self.client.rows(&self.prepared[s.index()], params)
    }

    /// A read's one row, which must be there.
    fn row(&mut self, s: Stmt, params: Vec<Param>) -> Step<Vec<Cell>> {
        let mut rows = self.rows(s, params)?;
        match rows.is_empty() {
            false => Ok(rows.swap_remove(0)),
            true => Err(missing(s)),
        }
    }

    fn begin(&mut self) -> Step<()> {
        self.sent.begin += 1;
        self.client.begin().map(drop)
    }

    fn commit(&mut self) -> Step<Ended> {
        self.sent.commit += 1;
        self.client.commit().map(|_| Ended::Committed)
    }

    fn rollback(&mut self) -> Step<Ended> {
        self.sent.rollback += 1;
        self.client.rollback().map(|_| Ended::RolledBack)
    }

    /// After a deadlock or serialization failure: the transaction ended on the server
    /// (one ROLLBACK, whichever of the client's calls sends it), ready to be tried again.
    pub(crate) fn abandon(&mut self) -> Step<()> {
        self.sent.rollback += 1;
        self.client.recover()?;
        self.client.rollback().map(drop)
    }
}

fn missing(s: Stmt) -> (Failure, String) {
    let table = s
        .sql()
        .split(" FROM ")
        .nth(1)
        .unwrap_or("")
        .split(' ')
        .next();
    let table = table.unwrap_or("a table");
    let why =
        format!("no row in {table} where the loaded database has one: is it a TPC-C database?");
    (Failure::Fatal, why)
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Committed,
    /// New-Order's 1% with an unused item (2.4.1.4): rolled back, as the specification asks.
    RolledBack,
}

/// A customer, as a Payment or Order-Status names one (2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Customer {
    Id(u32),
    LastName(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) item: u32,
    pub(crate) supply_w: u32,
    pub(crate) quantity: u32,
}

/// A transaction, drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    NewOrder {
        d: u32,
        c: u32,
        lines: Vec<Line>,
    },
    Payment {
        d: u32,
        c_w: u32,
        c_d: u32,
        customer: Customer,
        cents: i64,
    },
    OrderStatus {
        d: u32,
        customer: Customer,
    },
    Delivery {
        carrier: u32,
    },
    StockLevel {
        threshold: u32,
    },
}

/// Another warehouse than `w`, uniformly (there are at least two).
fn other_warehouse(rng: &mut impl Rng, w: u32, warehouses: u32) -> u32 {
    let o = rng.random_range(1..warehouses);
    if o >= w {
        o + 1
    } else {
        o
    }
}

/// 60% by last name (NURand(255) over the run's C), else by id (NURand(1023)).
fn customer(rng: &mut impl Rng, c: &Constants) -> Customer {
    match rng.random_range(1..=100) <= 60 {
        true => Customer::LastName(last_name(nurand(rng, A_C_LAST, c.c_last, 0, 999))),
        false => Customer::Id(nurand(rng, A_C_ID, c.c_id, 1, 3000)),
    }
}

impl Input {
    pub(crate) fn draw(txn: Txn, t: &Terminal, rng: &mut impl Rng) -> Input {
        let d = rng.random_range(1..=DISTRICTS);
        match txn {
            Txn::NewOrder => {
                let n = rng.random_range(5..=15);
                let mut lines: Vec<Line> = (0..n)
                    .map(|_| Line {
                        item: nurand(rng, A_OL_I_ID, t.c.ol_i_id, 1, ITEMS),
                        supply_w: match t.warehouses > 1 && rng.random_range(1..=100) == 1 {
                            true => other_warehouse(rng, t.w, t.warehouses),
                            false => t.w,
                        },
                        quantity: rng.random_range(1..=10),
                    })
                    .collect();
                if rng.random_range(1..=100) == 1 {
                    lines.last_mut().expect("invariant: 5 to 15 lines").item = ITEMS + 1;
                }
                Input::NewOrder {
                    d,
                    c: nurand(rng, A_C_ID, t.c.c_id, 1, 3000),
                    lines,
                }
            }
            Txn::Payment => {
                let (c_w, c_d) = match t.warehouses > 1 && rng.random_range(1..=100) > 85 {
                    true => (
                        other_warehouse(rng, t.w, t.warehouses),
                        rng.random_range(1..=DISTRICTS),
                    ),
                    false => (t.w, d),
                };
                Input::Payment {
                    d,
                    c_w,
                    c_d,
                    customer: customer(rng, &t.c),
                    cents: rng.random_range(100..=500_000),
                }
            }
            Txn::OrderStatus => Input::OrderStatus {
                d,
                customer: customer(rng, &t.c),
            },
            Txn::Delivery => Input::Delivery {
                carrier: rng.random_range(1..=10),
            },
            Txn::StockLevel => Input::StockLevel {
                threshold: rng.random_range(10..=20),
            },
        }
    }

    /// Run it once (BEGIN to COMMIT or ROLLBACK).
    pub(crate) fn run<C: SqlClient>(&self, s: &mut Session<C>, t: &Terminal) -> Step<Ended> {
        s.begin()?;
        match self {
            Input::NewOrder { d, c, lines } => new_order(s, t.w, *d, *c, lines),
            Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                cents,
            } => payment(s, t.w, *d, (*c_w, *c_d, customer), *cents),
            Input::OrderStatus { d, customer } => order_status(s, t.w, *d, customer),
            Input::Delivery { carrier } => delivery(s, t.w, *carrier),
            Input::StockLevel { threshold } => stock_level(s, t.w, t.stock_district, *threshold),
        }
    }
}

fn int(cell: &Cell) -> Step<i64> {
    match cell {
        Cell::Int(v) => Ok(*v),
        Cell::Text(t) => t.trim().parse().map_err(|_| bad(cell)),
        _ => Err(bad(cell)),
    }
}

fn text(cell: &Cell) -> Step<&str> {
    match cell {
        Cell::Text(t) => Ok(t),
        _ => Err(bad(cell)),
    }
}

/// A DECIMAL's value in hundredths (NULL, a SUM of no rows, is 0).
pub(crate) fn cents(cell: &Cell) -> Step<i64> {
    match cell {
        Cell::Null => Ok(0),
        Cell::Int(v) => Ok(v * 100),
        Cell::Text(t) => parse_cents(t).ok_or_else(|| bad(cell)),
        Cell::Other => Err(bad(cell)),
    }
}

/// "-12.3" -> -1230; more than two places are cut (the columns that hold money have two).
pub(crate) fn parse_cents(t: &str) -> Option<i64> {
    let t = t.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac: String = frac.chars().chain("00".chars()).take(2).collect();
    if !(int.bytes().all(|b| b.is_ascii_digit()) && frac.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let v = int.parse::<i64>().ok()? * 100 + frac.parse::<i64>().ok()?;
    Some(if neg { -v } else { v })
}

fn bad(cell: &Cell) -> (Failure, String) {
    (
        Failure::Fatal,
        format!("the server answered {cell:?} where TPC-C's column holds a number or text"),
    )
}

fn p(v: u32) -> Param {
    Param::UInt(v.into())
}

/// New stock after an order of `quantity` (2.4.2.2): refilled by 91 when it would fall
/// under 10.
pub(crate) fn restocked(stock: i64, quantity: i64) -> i64 {
    match stock >= quantity + 10 {
        true => stock - quantity,
        false => stock - quantity + 91,
    }
}

fn new_order<C: SqlClient>(
    s: &mut Session<C>,
    w: u32,
    d: u32,
    c: u32,
    lines: &[Line],
) -> Step<Ended> {
    s.row(Stmt::WarehouseTax, vec![p(w)])?;
    let district = s.row(Stmt::DistrictNext, vec![p(w), p(d)])?;
    let o = int(&district[0])? as u32;
    s.exec(Stmt::DistrictBump, vec![p(w), p(d)])?;
    s.row(Stmt::CustomerCredit, vec![p(w), p(d), p(c)])?;
    let local = lines.iter().all(|l| l.supply_w == w);
    let n = lines.len() as u32;
    s.exec(
        Stmt::OrderInsert,
        vec![p(o), p(d), p(w), p(c), p(n), p(local.into())],
    )?;
    s.exec(Stmt::NewOrderInsert, vec![p(o), p(d), p(w)])?;
    for (number, line) in (1..).zip(lines) {
        let item = s.rows(Stmt::Item, vec![p(line.item)])?;
        let Some(item) = item.first() else {
            return s.rollback();
        };
        let price = cents(&item[0])?;
        let stock = s.row(Stmt::StockForUpdate, vec![p(line.item), p(line.supply_w)])?;
        let quantity = line.quantity as i64;
        let left = restocked(int(&stock[0])?, quantity);
        let dist = text(&stock[1 + d as usize])?.to_string();
        let remote = u32::from(line.supply_w != w);
        let update = vec![
            p(left as u32),
            p(line.quantity),
            p(remote),
            p(line.item),
            p(line.supply_w),
        ];
        s.exec(Stmt::StockUpdate, update)?;
        let amount = Param::Fixed(quantity * price);
        let values = vec![
            p(o),
            p(d),
            p(w),
            p(number),
            p(line.item),
            p(line.supply_w),
            p(line.quantity),
            amount,
            Param::Text(dist),
        ];
        s.exec(Stmt::LineInsert, values)?;
    }
    s.commit()
}

/// The customer's id: given, or the middle one (rounded up) of those with the last name, in
/// order of first name (2.5.2.2).
fn customer_id<C: SqlClient>(s: &mut Session<C>, w: u32, d: u32, who: &Customer) -> Step<u32> {
    match who {
        Customer::Id(c) => Ok(*c),
        Customer::LastName(name) => {
            let rows = s.rows(
                Stmt::CustomersByName,
                vec![p(w), p(d), Param::Text(name.clone())],
            )?;
            let middle = rows.len().div_ceil(2).max(1) - 1;
            match rows.get(middle) {
                Some(row) => Ok(int(&row[0])? as u32),
                None => Err(missing(Stmt::CustomersByName)),
            }
        }
    }
}

/// c_data of a bad-credit customer: the payment's ids and amount in front, 500 characters kept.
pub(crate) fn credit_data(ids: [u32; 5], cents: i64, old: &str) -> String {
    let [c, c_d, c_w, d, w] = ids;
    let mut data = format!(
        "{c} {c_d} {c_w} {d} {w} {}.{:02}|{old}",
        cents / 100,
        cents % 100
    );
    data.truncate(500);
    data
}

fn payment<C: SqlClient>(
    s: &mut Session<C>,
    w: u32,
    d: u32,
    (c_w, c_d, who): (u32, u32, &Customer),
    cents: i64,
) -> Step<Ended> {
    s.exec(Stmt::WarehousePay, vec![Param::Fixed(cents), p(w)])?;
    let w_name = text(&s.row(Stmt::WarehouseName, vec![p(w)])?[0])?.to_string();
    s.exec(Stmt::DistrictPay, vec![Param::Fixed(cents), p(w), p(d)])?;
    let d_name = text(&s.row(Stmt::DistrictName, vec![p(w), p(d)])?[0])?.to_string();
    let c = customer_id(s, c_w, c_d, who)?;
    let customer = s.row(Stmt::CustomerForUpdate, vec![p(c_w), p(c_d), p(c)])?;
    let key = [p(c_w), p(c_d), p(c)];
    if text(&customer[10])? == "BC" {
        let old = s.row(Stmt::CustomerData, key.to_vec())?;
        let data = credit_data([c, c_d, c_w, d, w], cents, text(&old[0])?);
        let mut params = vec![Param::Fixed(cents), Param::Fixed(cents), Param::Text(data)];
        params.extend(key);
        s.exec(Stmt::CustomerPayData, params)?;
    } else {
        let mut params = vec![Param::Fixed(cents), Param::Fixed(cents)];
        params.extend(key);
        s.exec(Stmt::CustomerPay, params)?;
    }
    let mut h_data = format!("{w_name}    {d_name}");
    h_data.truncate(24);
    let history = vec![
        p(c),
        p(c_d),
        p(c_w),
        p(d),
        p(w),
        Param::Fixed(cents),
        Param::Text(h_data),
    ];
    s.exec(Stmt::HistoryInsert, history)?;
    s.commit()
}

fn order_status<C: SqlClient>(s: &mut Session<C>, w: u32, d: u32, who: &Customer) -> Step<Ended> {
    let c = customer_id(s, w, d, who)?;
    s.row(Stmt::CustomerBalance, vec![p(w), p(d), p(c)])?;
    let order = s.row(Stmt::LastOrder, vec![p(w), p(d), p(c)])?;
    let o = int(&order[0])? as u32;
    s.rows(Stmt::OrderLines, vec![p(w), p(d), p(o)])?;
    s.commit()
}

/// Every district's oldest undelivered order, in one transaction (2.7.4; a district with none
/// is skipped, as the specification allows).
fn delivery<C: SqlClient>(s: &mut Session<C>, w: u32, carrier: u32) -> Step<Ended> {
    for d in 1..=DISTRICTS {
        let oldest = s.rows(Stmt::OldestNewOrder, vec![p(w), p(d)])?;
        let Some(row) = oldest.first() else { continue };
        let o = int(&row[0])? as u32;
        if s.exec(Stmt::NewOrderDelete, vec![p(w), p(d), p(o)])? == 0 {
            continue;
        }
        let c = int(&s.row(Stmt::OrderCustomer, vec![p(w), p(d), p(o)])?[0])? as u32;
        s.exec(Stmt::OrderCarrier, vec![p(carrier), p(w), p(d), p(o)])?;
        s.exec(Stmt::LinesDelivered, vec![p(w), p(d), p(o)])?;
        let total = cents(&s.row(Stmt::LinesTotal, vec![p(w), p(d), p(o)])?[0])?;
        s.exec(
            Stmt::CustomerDelivered,
            vec![Param::Fixed(total), p(w), p(d), p(c)],
        )?;
    }
    s.commit()
}

fn stock_level<C: SqlClient>(s: &mut Session<C>, w: u32, d: u32, threshold: u32) -> Step<Ended> {
    let next = int(&s.row(Stmt::DistrictNextId, vec![p(w), p(d)])?[0])? as u32;
    let low = vec![
        p(w),
        p(d),
        p(next),
        p(next.saturating_sub(20)),
        p(w),
        p(threshold),
    ];
    s.row(Stmt::LowStock, low)?;
    s.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::sql::Outcome;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    /// A client that answers each statement from a script and records what it was sent.
    struct Scripted {
        texts: Vec<String>,
        answer: fn(&str, &[Param]) -> Rows,
        log: Vec<String>,
    }

    impl SqlClient for Scripted {
        type Statement = usize;
        const AUTO_ID: crate::servers::sql::AutoId = crate::servers::sql::AutoId::Zero;
        fn open(_: &crate::servers::Endpoint, _: &str, _: usize) -> Result<Scripted> {
            unreachable!("made by the test")
        }
        fn id(&self) -> Option<u32> {
            None
        }
        fn prepare(&mut self, sql: &str) -> Result<usize> {
            self.texts.push(sql.to_string());
            Ok(self.texts.len() - 1)
        }
        fn begin(&mut self) -> Outcome {
            self.log.push("BEGIN".into());
            Ok((false, 0))
        }
        fn commit(&mut self) -> Outcome {
            self.log.push("COMMIT".into());
            Ok((false, 0))
        }
        fn rollback(&mut self) -> Outcome {
            self.log.push("ROLLBACK".into());
            Ok((false, 0))
        }
        fn text(&mut self, _: &str) -> Outcome {
            Ok((false, 0))
        }
        fn exec(&mut self, s: &usize, params: Vec<Param>) -> Outcome {
            self.log.push(format!("{} {params:?}", self.texts[*s]));
            Ok((false, 1))
        }
        fn rows(&mut self, s: &usize, params: Vec<Param>) -> Step<Rows> {
            self.log.push(format!("{} {params:?}", self.texts[*s]));
            Ok((self.answer)(&self.texts[*s], &params))
        }
        fn recover(&mut self) -> Step<()> {
            Ok(())
        }
    }

    /// A loaded database's answers: every row there, item 100,001 not.
    fn loaded(sql: &str, params: &[Param]) -> Rows {
        let t = |s: &str| Cell::Text(s.to_string());
        if sql.contains("FROM item") {
            return match params[0] {
                Param::UInt(id) if id as u32 > ITEMS => vec![],
                _ => vec![vec![t("12.50"), t("name"), t("data")]],
            };
        }
        if sql.contains("d_next_o_id, d_tax") {
            return vec![vec![Cell::Int(3001), t("0.1000")]];
        }
        if sql.contains("s_quantity, s_data") {
            let mut row = vec![Cell::Int(15), t("data")];
            row.extend((1..=10).map(|d| t(&format!("dist-{d:02}"))));
            return vec![row];
        }
        if sql.contains("SELECT c_id FROM") {
            return (1..=4).map(|id| vec![Cell::Int(id * 10)]).collect();
        }
        if sql.contains("c_credit, c_credit_lim") {
            let mut row = vec![Cell::Other; 14];
            row[10] = t("BC");
            return vec![row];
        }
        vec![vec![t("x"), t("y")]]
    }

    fn session() -> Session<Scripted> {
        let client = Scripted {
            texts: vec![],
            answer: loaded,
            log: vec![],
        };
        Session::new(client).unwrap()
    }

    fn terminal(warehouses: u32) -> Terminal {
        let c = Constants {
            c_last: 1,
            c_id: 2,
            ol_i_id: 3,
        };
        Terminal {
            w: 1,
            stock_district: 1,
            warehouses,
            c,
        }
    }

    fn line(item: u32) -> Line {
        Line {
            item,
            supply_w: 1,
            quantity: 7,
        }
    }

    #[test]
    fn an_unused_item_rolls_the_new_order_back() {
        let mut s = session();
        let input = Input::NewOrder {
            d: 2,
            c: 5,
            lines: vec![line(1), line(ITEMS + 1)],
        };
        assert_eq!(
            input.run(&mut s, &terminal(1)).ok(),
            Some(Ended::RolledBack)
        );
        let log = &s.client.log;
        assert_eq!(log.last().unwrap(), "ROLLBACK");
        assert!(!log.iter().any(|l| l == "COMMIT"));
        // One line's stock and order line written before the unused item was found.
        assert_eq!(
            log.iter()
                .filter(|l| l.starts_with("INSERT INTO order_line"))
                .count(),
            1
        );
        assert_eq!((s.sent.begin, s.sent.rollback, s.sent.commit), (1, 1, 0));
    }

    #[test]
    fn a_new_order_line_takes_its_districts_stock_info_and_amount() {
        let mut s = session();
        let input = Input::NewOrder {
            d: 3,
            c: 5,
            lines: vec![line(42)],
        };
        assert_eq!(input.run(&mut s, &terminal(1)).ok(), Some(Ended::Committed));
        let log = &s.client.log;
        let stock = log.iter().find(|l| l.starts_with("UPDATE stock")).unwrap();
        // 15 in stock, 7 ordered: under 10 left, so 91 more (2.4.2.2).
        assert!(
            stock.ends_with("[UInt(99), UInt(7), UInt(0), UInt(42), UInt(1)]"),
            "{stock}"
        );
        let insert = log
            .iter()
            .find(|l| l.starts_with("INSERT INTO order_line"))
            .unwrap();
        assert!(
            insert.contains("Fixed(8750), Text(\"dist-03\")"),
            "{insert}"
        );
        let order = log
            .iter()
            .find(|l| l.starts_with("INSERT INTO orders"))
            .unwrap();
        assert!(
            order.ends_with("[UInt(3001), UInt(3), UInt(1), UInt(5), UInt(1), UInt(1)]"),
            "{order}"
        );
    }

    #[test]
    fn payment_by_name_takes_the_middle_customer_and_keeps_bad_credit_data() {
        let mut s = session();
        let who = Customer::LastName("BARBARBAR".into());
        let input = Input::Payment {
            d: 2,
            c_w: 1,
            c_d: 2,
            customer: who,
            cents: 12_345,
        };
        assert_eq!(input.run(&mut s, &terminal(1)).ok(), Some(Ended::Committed));
        let log = &s.client.log;
        // Four with the name: the second (ceil(4 / 2)), id 20.
        let update = log
            .iter()
            .find(|l| l.starts_with("UPDATE customer"))
            .unwrap();
        assert!(update.contains("c_data = ?"), "{update}");
        assert!(
            update.contains("Text(\"20 2 1 2 1 123.45|x\"), UInt(1), UInt(2), UInt(20)"),
            "{update}"
        );
        assert_eq!(s.sent.insert, 1);
    }

    #[test]
    fn the_rules_of_stock_money_and_data() {
        assert_eq!(restocked(50, 10), 40);
        assert_eq!(restocked(19, 10), 9 + 91);
        assert_eq!(restocked(20, 10), 10);
        assert_eq!(parse_cents("-10.00"), Some(-1000));
        assert_eq!(parse_cents("12.5"), Some(1250));
        assert_eq!(parse_cents("7"), Some(700));
        assert_eq!(parse_cents("1.2x"), None);
        assert_eq!(credit_data([1, 2, 3, 4, 5], 5, &"z".repeat(600)).len(), 500);
    }

    #[test]
    fn draws_follow_the_specifications_fractions() {
        let mut rng = SmallRng::seed_from_u64(4);
        let (t, n) = (terminal(4), 20_000);
        let (mut lines, mut remote, mut rolled) = (0, 0, 0);
        let (mut payments, mut away, mut by_name) = (0, 0, 0);
        for _ in 0..n {
            if let Input::NewOrder { lines: l, .. } = Input::draw(Txn::NewOrder, &t, &mut rng) {
                lines += l.len();
                remote += l.iter().filter(|x| x.supply_w != 1).count();
                rolled += usize::from(l.last().unwrap().item > ITEMS);
                assert!(l.iter().all(|x| (1..=4).contains(&x.supply_w)));
            }
            if let Input::Payment { c_w, customer, .. } = Input::draw(Txn::Payment, &t, &mut rng) {
                payments += 1;
                away += usize::from(c_w != 1);
                by_name += usize::from(matches!(customer, Customer::LastName(_)));
            }
        }
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b as f64;
        assert!(
            (0.8..1.2).contains(&pct(remote, lines)),
            "{}",
            pct(remote, lines)
        );
        assert!((0.7..1.3).contains(&pct(rolled, n)), "{}", pct(rolled, n));
        assert!((14.0..16.0).contains(&pct(away, payments)));
        assert!((59.0..61.0).contains(&pct(by_name, payments)));
        // One warehouse: nothing remote.
        let one = terminal(1);
        for _ in 0..1000 {
            if let Input::Payment { c_w, .. } = Input::draw(Txn::Payment, &one, &mut rng) {
                assert_eq!(c_w, 1);
            }
        }
    }
}
