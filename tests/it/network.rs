//! `network: bridge` with the MariaDB images built from containers/: the port is published
//! on 127.0.0.1 only, and the server must listen where the bridge reaches it (the images'
//! own my.cnf says `bind-address = 127.0.0.1`). Real container, real Docker engine.

use crate::common::{rmatrix, Cleanup};

#[test]
fn bridge_network_reaches_a_built_mariadb() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("bridge.yaml");
    std::fs::write(
        &matrix,
        format!(
            "servers:\n  db: {{build: {{dir: {}, args: {{suite: bookworm}}}}}}\nnetwork: bridge\n\
             engines: [InnoDB]\n\
             workloads:\n  w: {{slap: {{load_type: write}}}}\nconcurrency: [2]\nlength: 200\n\
             iterations: 1\nstart_timeout: 90s\n",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("containers/mariadb")
                .display()
        ),
    )
    .unwrap();
    let out_dir = tmp.path().join("bridge-net");
    let _guard = Cleanup("bridge-net".into());
    let started = std::time::Instant::now();
    let out = rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // No wall-clock bound: the run's time includes building the image (minutes on a fresh
    // machine, this module run alone). A server the bridge does not reach fails its start
    // at `start_timeout` (90 s), and exit 0 with an ok row below rules that out.
    eprintln!("bridge run: {:.1}s", started.elapsed().as_secs_f64());
    let results = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(results.lines().count(), 2, "{results}");
    assert!(
        results.lines().nth(1).unwrap().contains(",ok,"),
        "{results}"
    );
    let manifest = std::fs::read_to_string(out_dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("bridge"), "{manifest}");
    assert!(crate::common::containers("bridge-net").is_empty());
}
