//! The pictures of a stored run: its SVG charts parse and draw one series per deployment,
//! and report.html renders in a real browser (headless Chromium, installed by
//! scripts/setup.sh) with its charts on screen and no console errors.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::rmatrix;

/// A copy of a stored example run, re-rendered with `report --write`.
fn rendered_example(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("reports/examples")
        .join(name);
    let dir = tmp.path().join(name);
    copy_dir(&src, &dir);
    let _ = std::fs::remove_dir_all(dir.join("charts"));
    let _ = std::fs::remove_file(dir.join("report.html"));
    let out = rmatrix(&["report", dir.to_str().unwrap(), "--write"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (tmp, dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The allocator study: three deployments (glibc, tcmalloc, jemalloc) at three
/// concurrencies. Its throughput chart has one line per deployment, each in its own colour
/// and named in the legend; every chart parses as SVG; its per-second charts exist.
#[test]
fn svg_charts_parse_and_have_one_series_per_deployment() {
    let (_tmp, dir) = rendered_example("allocator-2026-11-29");
    let charts = dir.join("charts");
    let mut names: Vec<String> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for n in &names {
        let text = std::fs::read_to_string(charts.join(n)).unwrap();
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{n}: {e}"));
    }
    assert!(names.iter().any(|n| n.starts_with("seconds-")), "{names:?}");

    // Its report columns are the configs: one line each.
    let deployments = ["glibc", "tcmalloc", "jemalloc"];
    // The report metric (tps here) against concurrency.
    let text = std::fs::read_to_string(charts.join("tps-mariadb-10.11-oltp-rw.svg")).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let labels = texts(&doc);
    for d in &deployments {
        assert!(
            labels.iter().any(|l| l.starts_with(*d)),
            "{d} not in the legend: {labels:?}"
        );
    }
    // A series is a polyline through the three load levels in a colour of its own (the axes
    // and whiskers are black or two-point lines).
    let mut colours: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
                == 3
        })
        .filter_map(|n| n.attribute("stroke"))
        .filter(|c| *c != "#000000")
        .collect();
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), deployments.len(), "{colours:?}");

    // summary.md links every chart with a relative path; report.html carries them inline.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for n in &names {
        assert!(
            summary.contains(&format!("](charts/{n})")),
            "{n} not linked"
        );
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), names.len());
}

/// The console messages Chromium logged while loading `page`, and a screenshot of it.
fn chromium(page: &Path, shot: &Path) -> Vec<String> {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            // Tall enough for the whole page: the charts come after the tables.
            "--window-size=1200,9000",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (scripts/setup.sh installs Debian's chromium package)");
    assert!(shot.is_file(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// Pixels of a chart's colour (the palette's first blue, #1F77B4) in a PNG: nothing else on
/// the page is drawn in it.
fn chart_pixels(png: &Path) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| {
            let near = |a: u8, b: u8| a.abs_diff(b) < 40;
            channels >= 3 && near(p[0], 0x1F) && near(p[1], 0x77) && near(p[2], 0xB4)
        })
        .count()
}

#[test]
fn report_html_renders_in_headless_chromium() {
    let (tmp, dir) = rendered_example("load-curve-2026-11-30");
    let page = dir.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch, nothing to run.
    for needle in ["<script", "<link", "src=", "@import", "url("] {
        assert!(!html.contains(needle), "report.html has {needle}");
    }
    let shot = tmp.path().join("report.png");
    let console = chromium(&page, &shot);
    assert!(console.is_empty(), "console messages: {console:?}");
    let drawn = chart_pixels(&shot);
    assert!(
        drawn > 2000,
        "only {drawn} chart-coloured pixels: blank charts?"
    );

    // The checks can fail: a page with an error in its console and no chart.
    let bad = tmp.path().join("bad.html");
    std::fs::write(
        &bad,
        "<html><body><p>no chart</p><script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let bad_shot = tmp.path().join("bad.png");
    assert_eq!(chromium(&bad, &bad_shot).len(), 1);
    assert!(chart_pixels(&bad_shot) < 100);
}
