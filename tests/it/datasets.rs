//! Kept data sets on a real MariaDB (`datasets: {reuse: true}`): with a fresh server per
//! round and two configs that leave the data files alone, the tables are prepared once, on a
//! server of their own, and every measured server starts on a copy whose every table's
//! checksum equals the seal's; a config that shapes the files (row format) gets a set of its
//! own; the restored servers count what a freshly prepared one counts.

use std::process::Command;

use crate::common::{counters_of, result_rows, run_ok};

fn matrix(db: &str, datasets: bool, configs: &str) -> String {
    let datasets = match datasets {
        true => "datasets: {reuse: true}\nrepeat: {restart: true}\niterations: 2\n",
        false => "iterations: 1\n",
    };
    format!(
        "name: datasets\nservers:\n  mariadb-10.11: {{build: mariadb-10.11}}\nconfigs:\n{configs}\
         workloads:\n  ro:\n    oltp: {{test: oltp_read_only, tables: 2, table_size: 3000, db: {db}}}\n\
         concurrency: [2]\nlength: 2s\n{datasets}"
    )
}

fn data(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["data"].as_array().cloned().unwrap_or_default()
}

/// Removes the sets a test made (their volumes outlive the run by design).
struct Sets(Vec<String>);

impl Drop for Sets {
    fn drop(&mut self) {
        for key in &self.0 {
            let volume = format!("rmatrix-dataset-{key}");
            let _ = Command::new("docker")
                .args(["volume", "rm", &volume])
                .output();
        }
    }
}

/// Statements per transaction the server counted, of every row.
fn per_transaction(dir: &std::path::Path, counter: &str) -> Vec<f64> {
    result_rows(dir)
        .iter()
        .map(|row| {
            assert_eq!(row["status"], "ok", "{row:?}");
            let n = counters_of(dir, row).get(counter).copied().unwrap_or(0);
            n as f64 / row["commits"].parse::<f64>().unwrap()
        })
        .collect()
}

#[test]
fn tables_are_prepared_once_and_every_fresh_server_starts_on_a_checked_copy() {
    let tmp = tempfile::tempdir().unwrap();
    // A schema of its own: the set is new, whatever ran before.
    let db = format!("ds_it_{}", std::process::id());
    let configs = "  a: {mycnf: {innodb_flush_log_at_trx_commit: 2}}\n  \
                   b: {mycnf: {innodb_flush_log_at_trx_commit: 1, innodb_buffer_pool_size: 64M}}\n  \
                   compact: {mycnf: {innodb_default_row_format: compact}}\n";
    let (dir, _guard) = run_ok(tmp.path(), "datasets-kept", &matrix(&db, true, configs));
    let facts = data(&dir);
    let mut sets = Sets(Vec::new());
    for f in &facts {
        let key = f["dataset"].as_str().unwrap_or_default().to_string();
        if !key.is_empty() && !sets.0.contains(&key) {
            sets.0.push(key);
        }
    }
    let of = |config: &str, how: &str| -> Vec<&serde_json::Value> {
        facts
            .iter()
            .filter(|f| f["config"] == config && f["how"] == how)
            .collect()
    };
    // One prepare for a and b together (the first deployment makes it), one for compact.
    assert_eq!(
        of("a", "kept").len() + of("b", "kept").len(),
        1,
        "{facts:#?}"
    );
    assert_eq!(of("compact", "kept").len(), 1, "{facts:#?}");
    assert!(facts.iter().all(|f| f["how"] != "prepared"), "{facts:#?}");
    assert_eq!(sets.0.len(), 2, "{facts:#?}");
    let kept = &of("a", "kept")
        .into_iter()
        .chain(of("b", "kept"))
        .next()
        .unwrap()["dataset"];
    for config in ["a", "b", "compact"] {
        let restored = of(config, "restored");
        let starts: Vec<u64> = restored
            .iter()
            .map(|f| f["start"].as_u64().unwrap())
            .collect();
        assert_eq!(starts, [1, 2], "{config}: {facts:#?}");
        for f in restored {
            assert_eq!(f["rows"], 6000, "{f}");
            assert_eq!(
                f["verified"], "checksums of 3 tables equal the seal's",
                "{config}: {f}"
            );
            assert_eq!(&f["dataset"] == kept, config != "compact", "{config}: {f}");
        }
    }
    let kept_facts = facts.iter().find(|f| f["how"] == "kept").unwrap();
    assert!(kept_facts["seconds"].as_f64().unwrap() > 0.0);
    assert!(kept_facts["rows_per_s"].as_f64().unwrap() > 0.0);
    // No copy outlives its server.
    let left = Command::new("docker")
        .args([
            "volume",
            "ls",
            "-q",
            "--filter",
            "label=rmatrix.run=datasets-kept",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&left.stdout).trim().is_empty());

    // A freshly prepared server counts the same statements per transaction as the copies.
    let fresh_db = format!("{db}_fresh");
    let plain = "  a: {mycnf: {innodb_flush_log_at_trx_commit: 2}}\n";
    let (fresh, _g) = run_ok(
        tmp.path(),
        "datasets-fresh",
        &matrix(&fresh_db, false, plain),
    );
    let prepared = data(&fresh);
    assert_eq!(prepared.len(), 1, "{prepared:#?}");
    assert_eq!(prepared[0]["how"], "prepared");
    assert_eq!(prepared[0]["rows"], 6000);
    for counter in ["Com_select", "Handler_read_key"] {
        let want = per_transaction(&fresh, counter)[0];
        for got in per_transaction(&dir, counter) {
            assert!(
                (got - want).abs() < 0.01,
                "{counter}: {got} vs fresh {want}"
            );
        }
    }
}
