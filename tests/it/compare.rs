//! `rmatrix compare` and `rmatrix history` on stored run directories: the real binary on the
//! hand-made runs of tests/fixtures/compare (base, and candidates that are the same, 20%
//! slower or faster on InnoDB writes, 3% slower, noisy, from a newer format, or from another
//! matrix): joins, one-sided cells, metric directions, thresholds, formats and exit codes.

use crate::common::{rmatrix, Out};
use std::path::{Path, PathBuf};

const REGRESSION: i32 = 4;
const BAD_INPUT: i32 = 2;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

/// The fixtures' numbers were checked against scipy on their iterations alone, so these
/// compares assume no run noise (`--assume-run-noise 0`, last: a test may override it).
fn compare(candidate: &str, extra: &[&str]) -> Out {
    let base = fixture("base");
    let cand = fixture(candidate);
    let mut args = vec![
        "compare",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--assume-run-noise",
        "0",
    ];
    args.extend_from_slice(extra);
    rmatrix(&args)
}

/// The Markdown row of `cell` (e.g. `InnoDB / write`) and `metric`.
fn row<'a>(md: &'a str, cell: &str, metric: &str) -> &'a str {
    md.lines()
        .find(|l| l.contains(&format!("{cell} / c2 | {metric} ")))
        .unwrap_or_else(|| panic!("no row for {cell} {metric} in\n{md}"))
}

#[test]
fn same_config_again_is_unchanged() {
    let out = compare("same", &["--metric", "qps,lat_p99_ms"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out
        .stdout
        .contains("0 regressed, 0 improved, 0 small, 6 unchanged, 0 cannot tell"));
    // By default only the matrix's report metric (qps) is compared.
    let out = compare("same", &[]);
    assert!(out.stdout.contains(" 3 unchanged"), "{}", out.stdout);
    assert!(!out.stdout.contains("lat_p99_ms"));
    assert!(!out.stdout.contains("Only in"), "{}", out.stdout);
}

#[test]
fn slower_writes_regress_in_both_directions_with_exit_4() {
    let out = compare("slower", &["--metric", "qps", "--metric", "lat_p99_ms"]);
    assert_eq!(out.code, REGRESSION, "{}{}", out.stdout, out.stderr);
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    assert!(
        qps.contains("| -20.0% |") && qps.ends_with("| **regressed** |"),
        "{qps}"
    );
    // Latency went up: for a lower-is-better metric that is a regression too.
    let p99 = row(&out.stdout, "InnoDB / write", "lat_p99_ms ↓");
    assert!(
        p99.contains("| +25.0% |") && p99.ends_with("| **regressed** |"),
        "{p99}"
    );
    assert!(row(&out.stdout, "MyISAM / write", "qps").ends_with("| unchanged |"));
    // One-sided cells are listed, not compared.
    let only_base = out.stdout.split("Only in the baseline").nth(1).unwrap();
    assert!(only_base.contains("- mariadb-10.11 / default / InnoDB / key / c2"));
    let only_cand = out.stdout.split("Only in the candidate").nth(1).unwrap();
    assert!(only_cand.contains("- mariadb-10.11 / default / InnoDB / read / c2"));
    assert!(!out.stdout.contains("key / c2 | qps"));
}

#[test]
fn faster_writes_improve_and_pass() {
    let out = compare("faster", &["--metric", "qps,lat_p99_ms"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(row(&out.stdout, "InnoDB / write", "qps").ends_with("| improved |"));
    let p99 = row(&out.stdout, "InnoDB / write", "lat_p99_ms");
    assert!(
        p99.contains("-16.7%") && p99.ends_with("| improved |"),
        "{p99}"
    );
    // `seconds` is lower-is-better: less time is an improvement.
    let out = compare("faster", &["--metric", "seconds"]);
    assert_eq!(out.code, 0);
    assert!(row(&out.stdout, "InnoDB / write", "seconds").ends_with("| improved |"));
    let out = compare("slower", &["--metric", "seconds"]);
    assert_eq!(out.code, REGRESSION);
}

#[test]
fn threshold_and_alpha_decide_small_changes() {
    // -3% [-4.2%, -1.8%], p = 0.0005: real but inside the default ±5%: small, not unchanged.
    let out = compare("small", &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    assert!(
        qps.contains("| -3.0% |") && qps.contains("***") && qps.ends_with("| small |"),
        "{qps}"
    );
    assert_eq!(compare("small", &["--threshold", "2%"]).code, REGRESSION);
    assert_eq!(compare("small", &["--threshold", "2"]).code, REGRESSION);
    // A stricter alpha than the p-value: not significant, so not a regression.
    let out = compare("small", &["--threshold", "2%", "--alpha", "0.0001"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(row(&out.stdout, "InnoDB / write", "qps").ends_with("| cannot tell |"));
}

#[test]
fn noise_is_not_a_regression() {
    let out = compare("noisy", &[]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    // The arithmetic means differ by -10.0%; the change is the ratio of geometric means,
    // numpy: expm1(mean(log [700,1200,850,1100,650]) - mean(log [1000,1012,990,1005,995]))
    // = -12.61%.
    assert!(
        qps.contains("| -12.6% |") && qps.contains(" ~ |") && qps.ends_with("| cannot tell |"),
        "{qps}"
    );
}

#[test]
fn several_candidates_one_section_each() {
    let (base, same, slower) = (fixture("base"), fixture("same"), fixture("slower"));
    let out = rmatrix(&[
        "compare",
        base.to_str().unwrap(),
        same.to_str().unwrap(),
        slower.to_str().unwrap(),
    ]);
    assert_eq!(out.code, REGRESSION, "any regressed candidate fails");
    assert_eq!(out.stdout.matches("## rmatrix compare:").count(), 2);
    assert!(out
        .stdout
        .contains("`same-run` against baseline `base-run`"));
    assert!(out
        .stdout
        .contains("`slower-run` against baseline `base-run`"));
}

#[test]
fn csv_and_json_carry_the_same_verdicts() {
    let out = compare("slower", &["--format", "csv", "--metric", "qps,lat_p99_ms"]);
    assert_eq!(out.code, REGRESSION);
    let mut r = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = r.headers().unwrap().clone();
    assert_eq!(&header[0], "format_version");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let recs: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    let find = |engine: &str, workload: &str, metric: &str| {
        recs.iter()
            .find(|r| {
                &r[col("engine")] == engine
                    && &r[col("workload")] == workload
                    && &r[col("metric")] == metric
            })
            .unwrap_or_else(|| panic!("{engine} {workload} {metric}"))
    };
    let qps = find("InnoDB", "write", "qps");
    assert_eq!(&qps[col("verdict")], "regressed");
    assert_eq!(&qps[col("higher_is_better")], "true");
    // numpy: expm1(mean(log slower) - mean(log base)) * 100 = -20.000000000000068 (every
    // slower iteration is 0.8x its baseline iteration).
    assert!((qps[col("change_pct")].parse::<f64>().unwrap() + 20.0).abs() < 1e-9);
    assert_eq!(&qps[col("confidence")], "0.95");
    assert_eq!(&qps[col("basis")], "iterations");
    assert_eq!(
        &find("InnoDB", "write", "lat_p99_ms")[col("higher_is_better")],
        "false"
    );
    let verdicts: Vec<&str> = recs.iter().map(|r| &r[col("verdict")]).collect();
    assert!(verdicts.contains(&"only_in_baseline") && verdicts.contains(&"only_in_candidate"));

    let out = compare(
        "slower",
        &["--format", "json", "--metric", "qps,lat_p99_ms"],
    );
    assert_eq!(out.code, REGRESSION);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let c = &v[0];
    assert_eq!(c["format_version"], 3);
    assert_eq!(c["confidence"], 0.95);
    assert_eq!(c["changes"][0]["basis"], "iterations");
    assert_eq!(c["counts"]["regressed"], 2);
    assert_eq!(c["changes"][0]["verdict"], "regressed");
    assert_eq!(
        c["changes"][0]["baseline"]["values"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        c["only_in_candidate"][0],
        "mariadb-10.11 / default / InnoDB / read / c2"
    );
}

#[test]
fn unusable_inputs_exit_2_with_a_reason() {
    let cases: [(&str, &[&str], &str); 6] = [
        ("newer", &[], "format_version 99"),
        ("other", &[], "no cell in common"),
        ("does-not-exist", &[], "not an rmatrix run directory"),
        ("same", &["--metric", "speed"], "unknown metric `speed`"),
        ("same", &["--threshold", "lots"], "bad threshold `lots`"),
        (
            "same",
            &["--ignore", "colour"],
            "unknown dimension `colour`",
        ),
    ];
    for (cand, extra, why) in cases {
        let out = compare(cand, extra);
        assert_eq!(out.code, BAD_INPUT, "{cand} {extra:?}: {}", out.stderr);
        assert!(out.stderr.contains(why), "{cand} {extra:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    // Leaving the workload out of the join key makes `other`'s scan cell meet base's.
    let out = compare("other", &["--ignore", "workload"]);
    assert!(
        out.stdout.contains("Cells joined ignoring: workload."),
        "{}",
        out.stderr
    );
    let out = compare("same", &["--confidence", "42%"]);
    assert_eq!(out.code, BAD_INPUT);
    assert!(
        out.stderr.contains("bad confidence level `42%`"),
        "{}",
        out.stderr
    );
}

#[test]
fn markdown_matches_golden_file() {
    let out = compare("slower", &["--metric", "qps,lat_p99_ms"]);
    // The numbers, from an independent source (scipy 1.17.1, r = ttest_ind(log(slower),
    // log(base), equal_var=False), expm1 of the mean log difference and of
    // r.confidence_interval(0.95)): qps -20.00% [-20.99%, -19.00%], p = 1.3e-10;
    // lat_p99_ms +25.00% [+23.45%, +26.57%], p = 1.3e-10.
    for want in [
        "| -20.0% | -21.0% .. -19.0% | <0.0001 *** |",
        "| +25.0% | +23.5% .. +26.6% | <0.0001 *** |",
    ] {
        assert!(
            out.stdout.contains(want),
            "missing {want:?}:\n{}",
            out.stdout
        );
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/compare.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &out.stdout).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file; create with UPDATE_GOLDEN=1");
    assert_eq!(out.stdout, golden);
}

/// A run directory with one cell (InnoDB write) whose 3 iterations are `values`.
fn write_run(dir: &Path, day: u32, values: &[f64]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("matrix.yaml"),
        std::fs::read_to_string(fixture("base").join("matrix.yaml")).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        format!(
            r#"{{"format_version": 1, "run_id": "night-{day:02}", "started_at": "2026-11-{day:02}T02:00:00Z"}}"#
        ),
    )
    .unwrap();
    let mut csv = String::from(
        "server,config,engine,workload,kind,concurrency,iteration,status,error,qps,started_at,server_counters\n",
    );
    for (i, v) in values.iter().enumerate() {
        csv.push_str(&format!(
            "mariadb-10.11,default,InnoDB,write,slap,2,{},ok,,{v},2026-11-{day:02}T02:0{i}:00Z,{{}}\n",
            i + 1
        ));
    }
    std::fs::write(dir.join("results.csv"), csv).unwrap();
}

#[test]
fn history_flags_a_step_in_nightly_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let nights = [
        1000.0, 1010.0, 995.0, 1005.0, 990.0, 1002.0, // before
        880.0, 890.0, 875.0, 885.0, // after a 12% drop
    ];
    // Written out of order: history sorts by the manifest's started_at.
    for (i, q) in nights.iter().enumerate().rev() {
        let day = i as u32 + 1;
        write_run(
            &tmp.path().join(format!("run-{}", 20 - day)),
            day,
            &[q - 2.0, *q, q + 2.0],
        );
    }
    let dir = tmp.path().to_str().unwrap();
    let out = rmatrix(&["history", dir]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out
        .stdout
        .contains("10 runs, 2026-11-01T02:00:00Z to 2026-11-10T02:00:00Z"));
    // The compact view: one row per cell, the last 8 runs (#3..#10) as columns, the
    // change point marked in night 7's column.
    let view = out.stdout.split("### qps").nth(1).unwrap();
    assert!(view.contains("1 cells, the last 8 of 10 runs"), "{view}");
    assert!(
        view.contains("| cell | #3 | #4 | #5 | #6 | #7 | #8 | #9 | #10 |"),
        "{view}"
    );
    let row = view
        .lines()
        .find(|l| l.starts_with("| mariadb-10.11 / default / InnoDB / write / c2 |"))
        .unwrap();
    let cols: Vec<&str> = row.split(" | ").collect();
    assert_eq!(cols[5], "**880** ▼", "{row}");
    assert_eq!(row.matches('▼').count(), 1, "{row}");
    // scipy 1.17.1: the 6 run means before night 7 against the 4 from it (the whole
    // segments), ttest_ind(log(after), log(before), equal_var=True): p = 3.8e-09, the change
    // expm1(mean(log after) - mean(log before)) = -11.78%, its 95% interval
    // [-12.72%, -10.83%].
    let cp = out.stdout.split("### Change points").nth(1).unwrap();
    assert!(
        cp.contains(
            "/ InnoDB / write / c2 | qps | night-07 (2026-11-07T02:00:00Z) | 6 → 4 | 1000 | \
             882 | -11.8% [-12.7%, -10.8%] worse *** | <0.0001 |"
        ),
        "{cp}"
    );
    assert!(
        out.stdout.contains("Change points: E-divisive means"),
        "{}",
        out.stdout
    );

    let out = rmatrix(&["history", dir, "--format", "csv"]);
    assert_eq!(out.code, 0);
    let mut r = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let recs: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 10, "one line per night");
    let flagged: Vec<&str> = recs
        .iter()
        .filter(|r| &r[col("change_point")] == "true")
        .map(|r| &r[col("run_id")])
        .collect();
    assert_eq!(flagged, ["night-07"]);
    assert_eq!(&recs[6][col("direction")], "worse");
    let pct = |name: &str| recs[6][col(name)].parse::<f64>().unwrap();
    assert!((pct("change_pct") + 11.779).abs() < 1e-3);
    assert!((pct("change_lo_pct") + 12.719).abs() < 1e-3);
    assert!((pct("change_hi_pct") + 10.830).abs() < 1e-3);

    // JSON carries the same change point with its segments.
    let out = rmatrix(&["history", dir, "--format", "json"]);
    assert_eq!(out.code, 0);
    let h: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(h["method"], "e-divisive means with student-t on logarithms");
    let cp = &h["series"][0]["points"][6]["change_point"];
    assert_eq!(
        (&cp["runs_before"], &cp["runs_after"]),
        (&6.into(), &4.into())
    );
    assert!(
        (cp["change_lo_pct"].as_f64().unwrap() + 12.719).abs() < 1e-3,
        "{cp}"
    );

    // Scripts that still pass the sliding test's --window keep working, with a note.
    let out = rmatrix(&["history", dir, "--window", "5"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("--window is no longer used"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("| 6 → 4 |"), "{}", out.stdout);
}

#[test]
fn history_of_a_flat_series_has_no_change_points() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (i, q) in [1000.0, 1010.0, 995.0, 1005.0, 990.0, 1002.0, 998.0]
        .iter()
        .enumerate()
    {
        let d = tmp.path().join(format!("r{i}"));
        write_run(&d, i as u32 + 1, &[q - 3.0, *q, q + 3.0]);
        dirs.push(d.to_str().unwrap().to_string());
    }
    let mut args = vec!["history"];
    args.extend(dirs.iter().map(String::as_str));
    let out = rmatrix(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("No change points."), "{}", out.stdout);
    let out = rmatrix(&["history", tmp.path().join("nothing").to_str().unwrap()]);
    assert_eq!(out.code, BAD_INPUT);
}

/// A stored run with one iteration per cell and per-second samples (threadpool.yaml's):
/// every value gets a batch-means interval marked `ᵇ`, the legend says where it comes from,
/// and nothing claims a spread over iterations that do not exist.
#[test]
fn one_iteration_cells_get_batch_means_intervals_from_samples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/examples/threadpool-2026-11-29");
    let out = rmatrix(&["report", dir.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = &out.stdout;
    assert!(md.contains("mean of 1 iteration per cell.\n"), "{md}");
    assert!(md.contains("`±…ᵇ`: a cell measured once"), "{md}");
    assert!(!md.contains("CV 0.0%") && !md.contains("| 0.0% |"), "{md}");
    // Checked against an independent numpy/scipy re-implementation of stats::batch on
    // samples.csv (10.11 per-connection c16: 10 batches of 2 s, half-width 8.755%; c512
    // pool vs per-connection: the ratio of the two tps values, +47.17%, with the variance
    // of each log mean from its batch means, Satterthwaite df: [+27.83%, +69.44%],
    // p = 2.8e-5).
    assert!(md.contains("| 16 | 888 ±8.8%ᵇ |"), "{md}");
    assert!(md.contains("+47.2% [+27.8%, +69.4%]ᵇ *** better"), "{md}");
    assert!(
        md.contains("| 1 | 20.011 | 20.011 | 20.011 | 888 | n/a | n=1, ±8.8%ᵇ |"),
        "{md}"
    );

    // Without samples.csv the same cells say that they have no interval.
    let tmp = tempfile::tempdir().unwrap();
    for f in ["matrix.yaml", "manifest.json", "results.csv"] {
        std::fs::copy(dir.join(f), tmp.path().join(f)).unwrap();
    }
    let out = rmatrix(&["report", tmp.path().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = &out.stdout;
    assert!(md.contains("| 16 | 888 (n=1) |"), "{md}");
    assert!(
        md.contains("`(n=1)`: a cell measured once, without per-second samples"),
        "{md}"
    );
    assert!(
        md.contains("one iteration per cell and no per-second samples, so no interval"),
        "{md}"
    );
    assert!(md.contains("+23.2% (n=1, no interval)"), "{md}");
    assert!(md.contains("| n/a | n=1, no interval |"), "{md}");
    assert!(!md.contains("Welch"), "no test is claimed: {md}");
}

/// Two runs whose iterations agree closely but whose run means move from night to night:
/// the iterations alone call a -7% step a regression; with the run-to-run noise learned from
/// earlier nights (`--noise-from`) the same step is inside the noise.
#[test]
fn run_to_run_noise_from_history_widens_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // Earlier nights: run means 1000, 1080, 930, 1040, 960 (run-to-run CV ~6%), each run's
    // three iterations within ±0.2%.
    for (i, m) in [1000.0, 1080.0, 930.0, 1040.0, 960.0].iter().enumerate() {
        write_run(
            &store.join(format!("night-{i}")),
            i as u32 + 1,
            &[m - 2.0, *m, m + 2.0],
        );
    }
    let base = tmp.path().join("base");
    let cand = tmp.path().join("cand");
    write_run(&base, 10, &[998.0, 1000.0, 1002.0]);
    write_run(&cand, 11, &[928.0, 930.0, 932.0]);
    let (b, c, s) = (
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        store.to_str().unwrap(),
    );
    let out = rmatrix(&["compare", b, c, "--assume-run-noise", "0"]);
    assert_eq!(out.code, REGRESSION, "{}", out.stdout);
    assert!(out
        .stdout
        .contains("**Run-to-run noise unknown for 1 of 1 changes**"));
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    assert!(qps.contains("| iterations only |") && qps.ends_with("| **regressed** |"));

    let out = rmatrix(&["compare", "--noise-from", s, b, c]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    // The MDE from the same se and df (scipy 1.17.1): se = |log step| / 0.8555 = 0.08483,
    // (t.ppf(0.975, 4.0032) + t.ppf(0.8, 4.0032)) * se = 0.31526, a drop of 27.04%.
    assert!(
        qps.contains("| iterations + runs (5) | drops of 27.0% or more | cannot tell |"),
        "{qps}"
    );
    assert!(!out.stdout.contains("Run-to-run noise unknown"));
    // By hand (numpy): logs of the five nights' iterations, run means m_r and within
    // variances w_r = var(log run, ddof=1) / 3; tau^2 = var(m_r, ddof=1) - mean(w_r)
    // = 0.0035968; se^2 = w_base + w_cand + 2 tau^2, Satterthwaite df = 4.0032;
    // t = (mean(log cand) - mean(log base)) / se = -0.8555 -> p = 0.4405 (scipy t.sf),
    // change -7.0%, 95% interval -26.5% .. +17.7% (scipy t.ppf(0.975, df)).
    assert!(
        qps.contains("| -7.0% | -26.5% .. +17.7% | 0.4405 ~ |"),
        "{qps}"
    );

    // The candidate is never part of its own noise: the store plus the candidate itself
    // gives the same answer.
    let out = rmatrix(&["compare", "--noise-from", s, "--noise-from", c, b, c]);
    assert!(row(&out.stdout, "InnoDB / write", "qps").contains("| -26.5% .. +17.7% |"));
    // Fewer than 3 earlier runs of a cell: no run noise, and the output says so.
    let few = tmp.path().join("few");
    for i in 0..2 {
        write_run(&few.join(format!("n{i}")), 20 + i, &[999.0, 1000.0, 1001.0]);
    }
    let out = rmatrix(&["compare", "--noise-from", few.to_str().unwrap(), b, c]);
    assert!(
        out.stdout.contains("hold fewer than 3 runs of these cells"),
        "{}",
        out.stdout
    );
}

/// A copy of the stored run `src` as night `day`, with every qps value times `factor(row)`.
fn scaled_night(src: &Path, dst: &Path, day: u32, factor: impl Fn(&csv::StringRecord) -> f64) {
    std::fs::create_dir_all(dst).unwrap();
    std::fs::copy(src.join("matrix.yaml"), dst.join("matrix.yaml")).unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("manifest.json")).unwrap()).unwrap();
    manifest["run_id"] = format!("night-{day:02}").into();
    manifest["started_at"] = format!("2026-12-{day:02}T02:00:00Z").into();
    std::fs::write(dst.join("manifest.json"), manifest.to_string()).unwrap();
    let mut r = csv::Reader::from_path(src.join("results.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let qps = header.iter().position(|h| h == "qps").unwrap();
    let mut w = csv::Writer::from_path(dst.join("results.csv")).unwrap();
    w.write_record(&header).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        let mut out: Vec<String> = rec.iter().map(String::from).collect();
        if let Ok(v) = rec[qps].parse::<f64>() {
            out[qps] = (v * factor(&rec)).to_string();
        }
        w.write_record(&out).unwrap();
    }
    w.flush().unwrap();
}

/// Twelve nights replayed from a stored run (binlog-2026-11-29: 40 cells, 3 real iterations
/// each): a shared night-to-night wobble of up to 1.5%, then binlog-on InnoDB 15% slower from
/// night 8. The 8 of those 10 cells whose iterations spread by a CV of 1-15% are flagged at
/// night 8 and nowhere else; the two whose iterations spread by 27% (10.11 key-autoinc and
/// key-guid) are not, because a run mean is never taken as more precise than its iterations
/// say (p ~ 0.1 with 7 and 5 runs). None of the 30 unchanged cells is flagged.
#[test]
fn history_of_a_stored_run_replayed_finds_the_regressed_cells_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/examples/binlog-2026-11-29");
    let tmp = tempfile::tempdir().unwrap();
    let wobble = [
        1.0, 1.015, 0.99, 1.005, 0.985, 1.01, 0.995, 1.0, 0.99, 1.01, 1.005, 0.995,
    ];
    for (i, w) in wobble.iter().enumerate() {
        let day = i as u32 + 1;
        scaled_night(&src, &tmp.path().join(format!("n{day:02}")), day, |rec| {
            let hit = day >= 8 && &rec[1] == "binlog-on" && &rec[2] == "InnoDB";
            w * if hit { 0.85 } else { 1.0 }
        });
    }
    let out = rmatrix(&["history", tmp.path().to_str().unwrap(), "--format", "csv"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut r = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let recs: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 40 * 12);
    let mut flagged: Vec<String> = recs
        .iter()
        .filter(|r| &r[col("change_point")] == "true")
        .map(|r| {
            let pct: f64 = r[col("change_pct")].parse().unwrap();
            assert!((pct + 15.0).abs() < 0.01, "{r:?}");
            assert_eq!(
                (&r[col("run_id")], &r[col("direction")]),
                ("night-08", "worse")
            );
            format!("{} {}", &r[col("server")], &r[col("workload")])
        })
        .collect();
    flagged.sort();
    assert_eq!(
        flagged,
        [
            "mariadb-10.11 write-autoinc-2idx",
            "mariadb-10.11 write-guid",
            "mariadb-10.11 write-guid-2idx",
            "mariadb-11.8 key-autoinc",
            "mariadb-11.8 key-guid",
            "mariadb-11.8 write-autoinc-2idx",
            "mariadb-11.8 write-guid",
            "mariadb-11.8 write-guid-2idx",
        ]
    );
    assert!(recs
        .iter()
        .filter(|r| &r[col("change_point")] == "true")
        .all(|r| &r[col("config")] == "binlog-on" && &r[col("engine")] == "InnoDB"));
    // The compact view marks the first run of the new level.
    let md = rmatrix(&["history", tmp.path().to_str().unwrap()]).stdout;
    let view = md.split("### qps").nth(1).unwrap();
    let row = view
        .lines()
        .find(|l| l.starts_with("| mariadb-11.8 / binlog-on / InnoDB / key-guid / c2 |"))
        .unwrap();
    assert!(row.contains("| **9908** ▼ |"), "{row}");
}

/// Without a store, compare assumes a run noise (`--assume-run-noise`, 5% by default): the
/// -7% step between two nights whose iterations agree within ±0.2% is no longer a
/// regression, and every format says what was assumed and what each cell can see; a 40%
/// drop still fails the gate.
#[test]
fn without_a_store_a_run_noise_is_assumed_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, cand, drop) = (
        tmp.path().join("b"),
        tmp.path().join("c"),
        tmp.path().join("d"),
    );
    write_run(&base, 10, &[998.0, 1000.0, 1002.0]);
    write_run(&cand, 11, &[928.0, 930.0, 932.0]);
    write_run(&drop, 12, &[598.0, 600.0, 602.0]);
    let (b, c, d) = (
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        drop.to_str().unwrap(),
    );
    let out = rmatrix(&["compare", b, c]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let qps = row(&out.stdout, "InnoDB / write", "qps");
    assert!(
        qps.contains("| iterations + run noise assumed (no store) |")
            && qps.ends_with("| cannot tell |"),
        "{qps}"
    );
    assert!(out
        .stdout
        .contains("**Run noise assumed for 1 of 1 changes**"));
    // The assumed 5% per run hides a 5% threshold: the cell is listed first as unprotected.
    let top = out.stdout.split("| cell |").next().unwrap();
    assert!(top.contains("**Unprotected: 1 of 1 changes cannot see the 5% threshold**"));
    assert!(top.contains("- mariadb-10.11 / default / InnoDB / write / c2 qps: sees drops of"));
    assert_eq!(rmatrix(&["compare", b, d]).code, REGRESSION);

    let out = rmatrix(&["compare", b, c, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let ch = &v[0]["changes"][0];
    assert_eq!(ch["basis"], "iterations_and_assumed_runs");
    assert_eq!(ch["verdict"], "cannot_tell");
    assert_eq!(ch["sees_threshold"], false);
    assert!(ch["p_value"].as_f64().unwrap() > 0.05);
    let mde = ch["mde_pct"].as_f64().unwrap();
    assert!(mde > 7.0 && mde < 30.0, "{mde}");
    assert_eq!(v[0]["assumed_run_noise_pct"], 5.0);
    assert_eq!(v[0]["family"]["tests"], 1);

    let out = rmatrix(&[
        "compare",
        b,
        c,
        "--format",
        "csv",
        "--assume-run-noise",
        "0",
    ]);
    assert_eq!(out.code, REGRESSION);
    let mut r = csv::Reader::from_reader(out.stdout.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rec = r.records().next().unwrap().unwrap();
    assert_eq!(&rec[col("verdict")], "regressed");
    assert_eq!(&rec[col("basis")], "iterations");
    assert_eq!(&rec[col("assumed_run_noise_pct")], "0");
    assert_eq!(&rec[col("sees_threshold")], "true");
    let mde: f64 = rec[col("mde_pct")].parse().unwrap();
    assert!(
        mde > 5.0 && mde < 6.0,
        "iterations within ±0.2%: just above the threshold: {mde}"
    );
    assert!(rec[col("p_adjusted")].is_empty());
}

/// `--fdr` adds the adjusted p-values (a column, a field) and says how alpha adds up.
#[test]
fn fdr_adds_adjusted_p_values() {
    let out = compare("slower", &["--metric", "qps,lat_p99_ms", "--fdr"]);
    assert_eq!(out.code, REGRESSION, "{}", out.stdout);
    assert!(out
        .stdout
        .contains("| p | p adj | interval includes | sees | verdict |"));
    assert!(out.stdout.contains("4 changes tested at alpha 0.05 each"));
    assert!(out
        .stdout
        .contains("`--fdr`: significance is judged on Benjamini-Hochberg"));
    let out = compare(
        "slower",
        &["--metric", "qps,lat_p99_ms", "--fdr", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["fdr"], true);
    // The two unchanged MyISAM cells have p = 1: adjusted 1.
    assert_eq!(v[0]["changes"][2]["p_adjusted"], 1.0);
}

/// `plan --noise-from`: what each cell would see with the matrix's iterations, and the
/// iterations a target needs; cells the store lacks are named.
#[test]
fn plan_prints_what_each_cell_would_see() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, m) in [1000.0, 1010.0, 990.0, 1005.0].iter().enumerate() {
        write_run(
            &tmp.path().join(format!("n{i}")),
            i as u32 + 1,
            &[m * 0.98, *m, m * 1.02],
        );
    }
    let matrix = fixture("base").join("matrix.yaml");
    let store = tmp.path().to_str().unwrap();
    let out = rmatrix(&[
        "plan",
        matrix.to_str().unwrap(),
        "--noise-from",
        store,
        "--target",
        "10%",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = &out.stdout;
    assert!(
        text.contains("Detection power of `compare` (qps, 5 iterations a side, 95% confidence, threshold 5%, 80% power):"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("  mariadb-10.11/default/InnoDB/write/c2: sees drops of"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("over 4 runs") && line.contains("learned"),
        "{line}"
    );
    assert!(
        line.contains("; 10% needs ") || line.contains("out of reach"),
        "{line}"
    );
    assert!(text.contains("  mariadb-10.11/default/MyISAM/key/c2: no earlier run of this cell"));
    // Without a store, the plan is the plain one.
    let out = rmatrix(&["plan", matrix.to_str().unwrap()]);
    assert!(!out.stdout.contains("Detection power"));
}
