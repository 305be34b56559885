//! The sbtest tables as sysbench's `oltp_common.lua` fills them: their rows, and what they
//! hold; each family's dialect writes them (`SqlFamily`).

use rand::Rng;

use super::rand::KeyDist;
use crate::servers::sql::{Row, Tables};
use crate::workloads::oltp::spec::OltpSpec;

/// `c`: 10 groups of 11 random digits joined by `-` (119 characters).
pub(crate) fn c_value<R: Rng>(rng: &mut R) -> String {
    digit_groups(rng, 10)
}

/// `pad`: 5 groups of 11 random digits joined by `-` (59 characters).
pub(crate) fn pad_value<R: Rng>(rng: &mut R) -> String {
    digit_groups(rng, 5)
}

fn digit_groups<R: Rng>(rng: &mut R, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push((b'0' + rng.random_range(0..10u8)) as char);
        }
    }
    s
}

/// Whether the test inserts ids of its own (`rand.unique()`): oltp_insert without auto_inc.
pub(crate) fn takes_unique_ids(spec: &OltpSpec) -> bool {
    spec.test == crate::workloads::oltp::spec::OltpTest::OltpInsert && !spec.auto_inc
}

/// Rows a table starts with: oltp_insert without auto_inc starts empty, as in sysbench.
pub(crate) fn initial_rows(spec: &OltpSpec) -> u32 {
    match takes_unique_ids(spec) {
        true => 0,
        false => spec.table_size,
    }
}

/// Rows `first..=last` as sysbench fills them: for each id, `k` then `c` then `pad`
/// drawn. Ids are explicit so that several connections can load one table in parallel and
/// still get sysbench's 1..N.
pub(crate) fn rows<R: Rng>(
    first: u32,
    last: u32,
    table_size: u32,
    dist: &KeyDist,
    rng: &mut R,
) -> Vec<Row> {
    (first..=last)
        .map(|id| {
            let k = dist.sample(rng, 1, table_size);
            (id, k, c_value(rng), pad_value(rng))
        })
        .collect()
}

/// What the family loads: the tables `spec` needs, in `engine` where there are engines.
pub(crate) fn tables<'a>(spec: &'a OltpSpec, engine: Option<&'a str>) -> Tables<'a> {
    Tables {
        db: &spec.db,
        count: spec.tables,
        rows: initial_rows(spec),
        auto_inc: spec.auto_inc,
        secondary: spec.secondary,
        create_secondary: spec.create_secondary,
        engine,
    }
}

/// Identifies what a loaded schema holds, so an unchanged one is not reloaded.
pub(crate) fn signature(spec: &OltpSpec, engine: Option<&str>) -> String {
    let mut s = format!(
        "tables={} rows={} auto_inc={} secondary={} create_secondary={}",
        spec.tables,
        initial_rows(spec),
        spec.auto_inc,
        spec.secondary,
        spec.create_secondary,
    );
    if let Some(engine) = engine {
        s.push_str(&format!(" engine={}", engine.to_lowercase()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn c_and_pad_shapes() {
        let mut rng = SmallRng::seed_from_u64(1);
        let c = c_value(&mut rng);
        let pad = pad_value(&mut rng);
        assert_eq!(c.len(), 119);
        assert_eq!(pad.len(), 59);
        for (s, groups) in [(&c, 10), (&pad, 5)] {
            let parts: Vec<&str> = s.split('-').collect();
            assert_eq!(parts.len(), groups);
            assert!(parts
                .iter()
                .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())));
        }
    }

    #[test]
    fn rows_have_every_id_once_in_order() {
        let spec = OltpSpec::default();
        let mut rng = SmallRng::seed_from_u64(1);
        let rows = rows(11, 20, 100, &KeyDist::new(&spec), &mut rng);
        let ids: Vec<u32> = rows.iter().map(|r| r.0).collect();
        assert_eq!(ids, (11..=20).collect::<Vec<u32>>());
        assert!(rows.iter().all(|r| (1..=100).contains(&r.1)));
        assert!(rows.iter().all(|r| r.2.len() == 119 && r.3.len() == 59));
    }

    #[test]
    fn signature_names_the_engine_where_there_is_one() {
        let spec = OltpSpec::default();
        assert_eq!(
            signature(&spec, Some("InnoDB")),
            "tables=1 rows=10000 auto_inc=true secondary=false create_secondary=true \
             engine=innodb"
        );
        assert_eq!(
            signature(&spec, None),
            "tables=1 rows=10000 auto_inc=true secondary=false create_secondary=true"
        );
    }

    #[test]
    fn oltp_insert_without_auto_inc_starts_empty() {
        use crate::workloads::oltp::spec::OltpTest;
        let spec = OltpSpec {
            test: OltpTest::OltpInsert,
            auto_inc: false,
            ..OltpSpec::default()
        };
        assert_eq!(initial_rows(&spec), 0);
        assert_eq!(initial_rows(&OltpSpec::default()), 10000);
    }
}
