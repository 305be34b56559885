//! The sbtest tables as sysbench's `oltp_common.lua` creates them for its pgsql driver
//! (`id SERIAL`, or `INTEGER NOT NULL` without auto_inc; no storage engine), and the rows in
//! COPY's text format. The keys are built after the load.

use std::fmt::Write;

use rand::Rng;

use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::schema::{c_value, initial_rows, pad_value};
use crate::workloads::oltp::spec::OltpSpec;

/// CREATE TABLE as sysbench writes it for pgsql, without its key: `PRIMARY KEY (id)` (or
/// with `secondary` a plain index on id, sysbench's MySQL `KEY xid`, which PostgreSQL's
/// CREATE TABLE has no spelling for) is added once the rows are in (`keys`).
pub(crate) fn create_table(spec: &OltpSpec, n: u32) -> String {
    let id = if spec.auto_inc {
        "SERIAL"
    } else {
        "INTEGER NOT NULL"
    };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
    )
}

/// What table `n` gets after its load: its key on id, sysbench's `k_N` with
/// `create_secondary`, and with SERIAL the sequence moved past the loaded ids (sysbench's
/// prepare lets SERIAL number the rows; the loaders give explicit ids to load in parallel).
pub(crate) fn after_load(spec: &OltpSpec, n: u32) -> Vec<String> {
    let mut out = vec![if spec.secondary {
        format!("CREATE INDEX xid_{n} ON sbtest{n}(id)")
    } else {
        format!("ALTER TABLE sbtest{n} ADD PRIMARY KEY (id)")
    }];
    if spec.create_secondary {
        out.push(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"));
    }
    if spec.auto_inc && initial_rows(spec) > 0 {
        out.push(format!(
            "SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {})",
            initial_rows(spec)
        ));
    }
    out
}

/// Rows `first..=last` in COPY's text format (tab-separated, one per line): the digits
/// and dashes of `c` and `pad` need no escaping.
pub(crate) fn copy_rows<R: Rng>(
    first: u32,
    last: u32,
    table_size: u32,
    dist: &KeyDist,
    rng: &mut R,
    out: &mut String,
) {
    out.clear();
    for id in first..=last {
        let k = dist.sample(rng, 1, table_size);
        let _ = writeln!(out, "{id}\t{k}\t{}\t{}", c_value(rng), pad_value(rng));
    }
}

/// Identifies what a loaded schema holds, so an unchanged one is not reloaded.
pub(crate) fn signature(spec: &OltpSpec) -> String {
    format!(
        "tables={} rows={} auto_inc={} secondary={} create_secondary={}",
        spec.tables,
        initial_rows(spec),
        spec.auto_inc,
        spec.secondary,
        spec.create_secondary,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn ddl_is_sysbenchs_pgsql_ddl() {
        let spec = OltpSpec::default();
        assert_eq!(
            create_table(&spec, 3),
            "CREATE TABLE sbtest3(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
        );
        assert_eq!(
            after_load(&spec, 3),
            [
                "ALTER TABLE sbtest3 ADD PRIMARY KEY (id)",
                "CREATE INDEX k_3 ON sbtest3(k)",
                "SELECT setval(pg_get_serial_sequence('sbtest3', 'id'), 10000)"
            ]
        );
        let spec = OltpSpec {
            auto_inc: false,
            secondary: true,
            create_secondary: false,
            ..OltpSpec::default()
        };
        assert!(create_table(&spec, 1).contains("id INTEGER NOT NULL,"));
        assert_eq!(after_load(&spec, 1), ["CREATE INDEX xid_1 ON sbtest1(id)"]);
    }

    #[test]
    fn copy_rows_are_tab_separated_lines() {
        let spec = OltpSpec::default();
        let mut out = String::new();
        let mut rng = SmallRng::seed_from_u64(1);
        copy_rows(11, 20, 100, &KeyDist::new(&spec), &mut rng, &mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 10);
        let f: Vec<&str> = lines[9].split('\t').collect();
        assert_eq!((f[0], f[2].len(), f[3].len()), ("20", 119, 59));
        assert!((1..=100).contains(&f[1].parse::<u32>().unwrap()));
    }
}
