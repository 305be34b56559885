//! Every statement the five transactions send (clause 2), as portable SQL with `?`
//! placeholders: prepared once per connection, named by `Stmt`. The texts are the only SQL of
//! the run phase; a family's client numbers the placeholders its own way.

/// What a statement does, as the server's counters class it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Select,
    Update,
    Insert,
    Delete,
}

macro_rules! statements {
    ($( $name:ident = $class:ident $sql:literal, )*) => {
        /// A prepared statement of the run.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Stmt { $( $name, )* }

        impl Stmt {
            pub(crate) const ALL: &'static [Stmt] = &[$( Stmt::$name, )*];

            pub(crate) fn sql(self) -> &'static str {
                match self { $( Stmt::$name => $sql, )* }
            }

            pub(crate) fn class(self) -> Class {
                match self { $( Stmt::$name => Class::$class, )* }
            }
        }
    };
}

statements! {
    // New-Order (2.4.2)
    WarehouseTax = Select "SELECT w_tax FROM warehouse WHERE w_id = ?",
    DistrictNext = Select "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
    DistrictBump = Update "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
    CustomerCredit = Select "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    OrderInsert = Insert "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
    NewOrderInsert = Insert "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    Item = Select "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
    StockForUpdate = Select "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE",
    StockUpdate = Update "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    LineInsert = Insert "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
    // Payment (2.5.2)
    WarehousePay = Update "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    WarehouseName = Select "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
    DistrictPay = Update "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    DistrictName = Select "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
    CustomersByName = Select "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    CustomerForUpdate = Select "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
    CustomerPay = Update "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    CustomerData = Select "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    CustomerPayData = Update "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    HistoryInsert = Insert "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
    // Order-Status (2.6.2)
    CustomerBalance = Select "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    LastOrder = Select "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
    OrderLines = Select "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    // Delivery (2.7.4)
    OldestNewOrder = Select "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
    NewOrderDelete = Delete "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
    OrderCustomer = Select "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    OrderCarrier = Update "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    LinesDelivered = Update "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    LinesTotal = Select "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    CustomerDelivered = Update "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    // Stock-Level (2.8.2)
    DistrictNextId = Select "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
    LowStock = Select "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
}

impl Stmt {
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_the_list() {
        for (i, s) in Stmt::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
            let verb = s.sql().split(' ').next().unwrap();
            let want = match s.class() {
                Class::Select => "SELECT",
                Class::Update => "UPDATE",
                Class::Insert => "INSERT",
                Class::Delete => "DELETE",
            };
            assert_eq!(verb, want, "{s:?}");
        }
    }
}
