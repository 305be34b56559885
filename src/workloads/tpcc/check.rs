//! The consistency conditions of clause 3.3.2.1-4, run after the measured phase: each a
//! query counting the warehouses or districts that break it, so that any answer but 0 names
//! the condition that failed.

/// A condition's number, what it says, and the query counting what breaks it.
pub(crate) const CONDITIONS: [(u32, &str, &str); 4] = [
    (
        1,
        "w_ytd = sum(d_ytd) of the warehouse's districts",
        "SELECT COUNT(*) FROM warehouse WHERE w_ytd <> \
         (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id)",
    ),
    (
        2,
        "d_next_o_id - 1 = max(o_id) = max(no_o_id) in each district",
        "SELECT COUNT(*) FROM district WHERE d_next_o_id - 1 <> \
         (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) \
         OR d_next_o_id - 1 <> \
         (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)",
    ),
    (
        3,
        "max(no_o_id) - min(no_o_id) + 1 = the new_order rows of each district",
        "SELECT COUNT(*) FROM (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 AS span, \
         COUNT(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) spans WHERE span <> n",
    ),
    (
        4,
        "sum(o_ol_cnt) = the order_line rows of each district",
        "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS ol_cnt FROM orders \
         GROUP BY o_w_id, o_d_id) o JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n \
         FROM order_line GROUP BY ol_w_id, ol_d_id) l \
         ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.ol_cnt <> l.n",
    ),
];

/// The committed New-Orders, from the schema (HammerDB's NOPM counts its change).
pub(crate) const ORDERS_TAKEN: &str = "SELECT SUM(d_next_o_id) FROM district";

/// What failed: each broken condition with how many warehouses or districts break it.
pub(crate) fn broken(counts: &[(u32, i64)]) -> Option<String> {
    let failed: Vec<String> = (counts.iter())
        .filter(|(_, n)| *n != 0)
        .map(|(number, n)| {
            let what = CONDITIONS
                .iter()
                .find(|c| c.0 == *number)
                .map_or("", |c| c.1);
            format!("condition {number} ({what}) fails in {n} place(s)")
        })
        .collect();
    (!failed.is_empty()).then(|| failed.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_condition_is_named() {
        assert_eq!(broken(&[(1, 0), (2, 0), (3, 0), (4, 0)]), None);
        let msg = broken(&[(1, 1), (2, 0), (3, 0), (4, 2)]).unwrap();
        assert!(msg.starts_with("condition 1 (w_ytd = sum(d_ytd)"), "{msg}");
        assert!(msg.ends_with("condition 4 (sum(o_ol_cnt) = the order_line rows of each district) fails in 2 place(s)"), "{msg}");
    }
}
