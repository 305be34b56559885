//! The server's own counters, by name, as a family reads them before and after the measured
//! phase (which counters and how: the family's folder).

use std::collections::BTreeMap;

/// Counter name -> value.
pub type Status = BTreeMap<String, u64>;

pub(crate) fn parse(rows: Vec<(String, String)>) -> Status {
    rows.into_iter()
        .filter_map(|(k, v)| v.parse::<u64>().ok().map(|n| (k, n)))
        .collect()
}

/// after - before for every numeric counter present in both.
pub(crate) fn delta(before: &Status, after: &Status) -> Status {
    after
        .iter()
        .filter_map(|(k, a)| before.get(k).map(|b| (k.clone(), a.saturating_sub(*b))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_of_numeric_counters() {
        let before = parse(vec![
            ("Questions".into(), "10".into()),
            ("Uptime".into(), "5".into()),
            ("Ssl_cipher".into(), "".into()),
        ]);
        let after = parse(vec![
            ("Questions".into(), "25".into()),
            ("Uptime".into(), "9".into()),
        ]);
        let d = delta(&before, &after);
        assert_eq!(d.get("Questions"), Some(&15));
        assert_eq!(d.get("Uptime"), Some(&4));
        assert_eq!(d.len(), 2);
    }
}
