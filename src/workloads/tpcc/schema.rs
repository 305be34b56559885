//! The nine TPC-C tables (clause 1.3) as portable DDL, and the two secondary indexes the
//! transactions need (customer by last name, orders by customer). What differs between SQL
//! families is left as two words the family's dialect fills in: the timestamp column's type
//! (`{datetime}`: a MySQL TIMESTAMP column would update itself) and the options after a
//! table's columns (`{options}`: a storage engine). Every integer column is INTEGER, every
//! money or rate column DECIMAL as the specification sizes it.

/// Each table's name and CREATE TABLE text, in loading order.
pub(crate) const TABLES: [(&str, &str); 9] = [
    (
        "warehouse",
        "CREATE TABLE warehouse (w_id INTEGER NOT NULL, w_name VARCHAR(10), \
         w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), \
         w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id)){options}",
    ),
    (
        "district",
        "CREATE TABLE district (d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, \
         d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), \
         d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), \
         d_ytd DECIMAL(12,2), d_next_o_id INTEGER, PRIMARY KEY (d_w_id, d_id)){options}",
    ),
    (
        "customer",
        "CREATE TABLE customer (c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, \
         c_w_id INTEGER NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), \
         c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), \
         c_zip CHAR(9), c_phone CHAR(16), c_since {datetime}, c_credit CHAR(2), \
         c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), \
         c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, c_delivery_cnt INTEGER, \
         c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id)){options}",
    ),
    (
        "history",
        "CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, \
         h_d_id INTEGER, h_w_id INTEGER, h_date {datetime}, h_amount DECIMAL(6,2), \
         h_data VARCHAR(24)){options}",
    ),
    (
        "orders",
        "CREATE TABLE orders (o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, \
         o_w_id INTEGER NOT NULL, o_c_id INTEGER, o_entry_d {datetime}, o_carrier_id INTEGER, \
         o_ol_cnt INTEGER, o_all_local INTEGER, PRIMARY KEY (o_w_id, o_d_id, o_id)){options}",
    ),
    (
        "new_order",
        "CREATE TABLE new_order (no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, \
         no_w_id INTEGER NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id)){options}",
    ),
    (
        "order_line",
        "CREATE TABLE order_line (ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, \
         ol_w_id INTEGER NOT NULL, ol_number INTEGER NOT NULL, ol_i_id INTEGER, \
         ol_supply_w_id INTEGER, ol_delivery_d {datetime}, ol_quantity INTEGER, \
         ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), \
         PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)){options}",
    ),
    (
        "item",
        "CREATE TABLE item (i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), \
         i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id)){options}",
    ),
    (
        "stock",
        "CREATE TABLE stock (s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, \
         s_quantity INTEGER, s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), \
         s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), \
         s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, \
         s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50), \
         PRIMARY KEY (s_w_id, s_i_id)){options}",
    ),
];

/// The secondary indexes, made once the rows are in (a bulk load is faster without them).
pub(crate) const INDEXES: [&str; 2] = [
    "CREATE INDEX tpcc_customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX tpcc_orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];

/// A CREATE TABLE text in a family's words.
pub(crate) fn create(text: &str, datetime: &str, options: &str) -> String {
    text.replace("{datetime}", datetime)
        .replace("{options}", options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_filled() {
        for (name, text) in TABLES {
            let sql = create(text, "DATETIME", " ENGINE=InnoDB");
            assert!(!sql.contains('{') && !sql.contains('}'), "{name}");
            assert!(sql.starts_with(&format!("CREATE TABLE {name} (")), "{name}");
            assert!(sql.ends_with(" ENGINE=InnoDB"), "{name}");
            // Parentheses balance: no column list cut short by an edit.
            let depth = sql.chars().fold(0i32, |d, c| match c {
                '(' => d + 1,
                ')' => d - 1,
                _ => d,
            });
            assert_eq!(depth, 0, "{name}");
        }
    }
}
