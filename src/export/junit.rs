//! JUnit XML of a comparison (`compare --junit FILE`), for CI systems that show test
//! results (GitLab, Jenkins, GitHub actions that read JUnit): one `<testsuite>` per
//! candidate, one `<testcase>` per compared cell and metric (`classname` `rmatrix.<matrix>`,
//! `name` the cell and the metric), a `<failure>` for each regression with its change and
//! interval, a `<skipped>` for each change that could not be told from noise (with its
//! interval) and for each cell that could not be compared. The layout is that of
//! Apache Ant's JUnit task, which the common readers accept, checked against rmatrix's own XSD
//! of it (tests/fixtures/junit/junit.xsd). Every text from a run goes through `escape::xml`.

use std::fmt::Write as _;
use std::path::Path;

use super::decimal::shifted;
use crate::compare::join::{Comparison, MetricChange, Verdict};
use crate::escape::xml;

/// Where and when the comparison ran, as the schema's `hostname` and `timestamp` want them.
pub(crate) struct Context {
    pub(crate) hostname: String,
    /// `YYYY-MM-DDTHH:MM:SS` in UTC, no zone (the schema's pattern).
    pub(crate) timestamp: String,
}

impl Context {
    pub(crate) fn now() -> Context {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".into());
        Context {
            hostname,
            timestamp: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
        }
    }
}

/// Write the JUnit XML of `comparisons` to `path`; a path that cannot be written is a usage
/// error (exit code 2) that names it.
pub(crate) fn write(path: &Path, comparisons: &[Comparison]) -> anyhow::Result<()> {
    let text = document(comparisons, &Context::now());
    std::fs::write(path, text).map_err(|e| {
        crate::error::UsageError(format!(
            "--junit {}: cannot write the file: {e}",
            crate::escape::terminal(&path.display().to_string())
        ))
        .into()
    })
}

/// `12.3456%` as a message shows it: two decimals.
fn pct(v: Option<f64>) -> String {
    v.map(|v| format!("{v:+.2}%"))
        .unwrap_or_else(|| "n/a".into())
}

/// The failure of a regressed change: the message a CI page shows, and the full numbers.
fn failure(c: &Comparison, ch: &MetricChange) -> String {
    let level = shifted(c.confidence, 2);
    let message = format!(
        "{} regressed {} ({level}% interval {} to {}), threshold {}%",
        ch.metric,
        pct(ch.change_pct),
        pct(ch.ci_low_pct),
        pct(ch.ci_high_pct),
        c.threshold_of(ch)
    );
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_else(|| "n/a".into());
    let body = format!(
        "baseline mean {} {unit} (n {}), candidate mean {} {unit} (n {}); change {}% \
         [{}%, {}%] at {level}%; p-value {}",
        ch.baseline.mean,
        ch.baseline.n,
        ch.candidate.mean,
        ch.candidate.n,
        opt(ch.change_pct),
        opt(ch.ci_low_pct),
        opt(ch.ci_high_pct),
        opt(ch.p_value),
        unit = ch.unit,
    );
    format!(
        "      <failure message=\"{}\" type=\"regression\">{}</failure>\n",
        xml(&message),
        xml(&body)
    )
}

/// `rmatrix.<matrix>`: Jenkins splits a classname at its last dot into package and class,
/// so the matrix's own dots become `_` and the cell goes into the case's name.
fn classname(c: &Comparison) -> String {
    match c.candidate.matrix.is_empty() {
        true => "rmatrix.compare".into(),
        false => format!("rmatrix.{}", c.candidate.matrix.replace('.', "_")),
    }
}

/// A case's name: the cell and the metric, as the Markdown table names them.
fn case_name(cell: &str, metric: &str) -> String {
    format!("{cell} / {metric}")
}

/// The `<skipped>` of a change that could not be told from noise: the interval reaches
/// past the threshold on both sides of "no change".
fn cannot_tell(c: &Comparison, ch: &MetricChange) -> String {
    let message = format!(
        "cannot tell: {} {} ({}% interval {} to {}), threshold {}%",
        ch.metric,
        pct(ch.change_pct),
        shifted(c.confidence, 2),
        pct(ch.ci_low_pct),
        pct(ch.ci_high_pct),
        c.threshold_of(ch)
    );
    format!("      <skipped message=\"{}\"/>\n", xml(&message))
}

/// One candidate's suite: its cases, then the counts the schema asks for.
fn suite(id: usize, c: &Comparison, ctx: &Context) -> String {
    let mut cases = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for ch in &c.changes {
        tests += 1;
        let _ = write!(
            cases,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
            xml(&classname(c)),
            xml(&case_name(&ch.cell, &ch.metric))
        );
        match ch.verdict {
            Verdict::Regressed => {
                failures += 1;
                let _ = write!(cases, ">\n{}    </testcase>\n", failure(c, ch));
            }
            Verdict::CannotTell => {
                skipped += 1;
                let _ = write!(cases, ">\n{}    </testcase>\n", cannot_tell(c, ch));
            }
            Verdict::Improved | Verdict::Small | Verdict::Unchanged => cases.push_str("/>\n"),
        }
    }
    let mut metrics: Vec<&str> = c.changes.iter().map(|ch| ch.metric.as_str()).collect();
    metrics.dedup();
    metrics.sort_unstable();
    metrics.dedup();
    for (why, cells) in [
        ("only in the baseline", &c.only_in_baseline),
        ("only in the candidate", &c.only_in_candidate),
        ("no successful iteration", &c.no_successful_iteration),
    ] {
        for (cell, metric) in cells
            .iter()
            .flat_map(|cell| metrics.iter().map(move |m| (cell, m)))
        {
            tests += 1;
            skipped += 1;
            let _ = writeln!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      \
                 <skipped message=\"not compared: {why}\"/>\n    </testcase>",
                xml(&classname(c)),
                xml(&case_name(cell, metric))
            );
        }
    }
    let property = |name: &str, value: &str| {
        format!(
            "      <property name=\"{name}\" value=\"{}\"/>\n",
            xml(value)
        )
    };
    let name = format!(
        "rmatrix compare {} -> {}",
        c.baseline.run_id, c.candidate.run_id
    );
    format!(
        "  <testsuite package=\"rmatrix\" id=\"{id}\" name=\"{}\" timestamp=\"{}\" \
         hostname=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
         skipped=\"{skipped}\" time=\"0\">\n    <properties>\n{}{}{}{}{}{}{}    </properties>\n\
         {cases}    <system-out></system-out>\n    <system-err></system-err>\n  </testsuite>\n",
        xml(&name),
        xml(&ctx.timestamp),
        xml(&ctx.hostname),
        property("baseline", &c.baseline.path),
        property("candidate", &c.candidate.path),
        property("baseline_run_id", &c.baseline.run_id),
        property("candidate_run_id", &c.candidate.run_id),
        property("threshold_pct", &c.threshold_pct.to_string()),
        property("confidence", &c.confidence.to_string()),
        property("regressed", &c.counts.regressed.to_string()),
    )
}

/// The whole document: a `<testsuites>` of one suite per candidate.
pub(crate) fn document(comparisons: &[Comparison], ctx: &Context) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (id, c) in comparisons.iter().enumerate() {
        out.push_str(&suite(id, c, ctx));
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::join::tests_support::{change, empty_comparison};

    const SCHEMA: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/junit/junit.xsd"
    );

    /// `xmllint --schema` (Debian's libxml2-utils) on `xml`: its complaints, or none.
    pub(crate) fn xmllint(xml: &str) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("junit.xml");
        std::fs::write(&file, xml).unwrap();
        let out = std::process::Command::new("xmllint")
            .args(["--noout", "--schema", SCHEMA])
            .arg(&file)
            .output()
            .expect("xmllint (Debian's libxml2-utils; scripts/setup.sh installs it)");
        match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }

    fn ctx() -> Context {
        Context {
            hostname: "ci-1".into(),
            timestamp: "2026-12-02T18:00:00".into(),
        }
    }

    fn comparison(cell: &str) -> Comparison {
        let mut c = empty_comparison();
        c.baseline.run_id = "base".into();
        c.candidate.run_id = "cand".into();
        c.candidate.matrix = "binlog.v2".into();
        let mut bad = change(cell, "qps", Verdict::Regressed);
        bad.change_pct = Some(-19.912);
        bad.ci_low_pct = Some(-21.0);
        bad.ci_high_pct = Some(-18.75);
        c.changes.push(bad);
        c.changes
            .push(change(cell, "lat_p99_ms", Verdict::Unchanged));
        let mut noisy = change(cell, "lat_p95_ms", Verdict::CannotTell);
        (noisy.change_pct, noisy.ci_low_pct, noisy.ci_high_pct) =
            (Some(2.0), Some(-9.0), Some(13.0));
        c.changes.push(noisy);
        c.counts.regressed = 1;
        c.only_in_baseline
            .push("mariadb-10.11 / MyISAM / key / c2".into());
        c
    }

    #[test]
    fn one_case_per_cell_and_metric_a_failure_per_regression() {
        let xml = document(&[comparison("mariadb-10.11 / InnoDB / write / c2")], &ctx());
        xmllint(&xml).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let suite = doc
            .descendants()
            .find(|n| n.has_tag_name("testsuite"))
            .unwrap();
        assert_eq!(suite.attribute("tests"), Some("6"), "{xml}");
        assert_eq!(suite.attribute("failures"), Some("1"));
        assert_eq!(suite.attribute("skipped"), Some("4"));
        let failure = doc
            .descendants()
            .find(|n| n.has_tag_name("failure"))
            .unwrap();
        assert_eq!(
            failure.attribute("message"),
            Some("qps regressed -19.91% (95% interval -21.00% to -18.75%), threshold 5%")
        );
        let case = failure.parent().unwrap();
        // Jenkins splits at the last dot: package rmatrix, class binlog_v2.
        assert_eq!(case.attribute("classname"), Some("rmatrix.binlog_v2"));
        assert_eq!(
            case.attribute("name"),
            Some("mariadb-10.11 / InnoDB / write / c2 / qps")
        );
        assert!(failure.text().unwrap().contains("change -19.912%"));
        let noisy = (doc.descendants())
            .find(|n| {
                n.attribute("name")
                    .is_some_and(|v| v.ends_with("/ lat_p95_ms"))
            })
            .unwrap();
        let skipped = noisy.first_element_child().unwrap();
        assert_eq!(
            skipped.attribute("message"),
            Some("cannot tell: lat_p95_ms +2.00% (95% interval -9.00% to +13.00%), threshold 5%")
        );
        let property = |name: &str| {
            (doc.descendants())
                .find(|n| n.attribute("name") == Some(name))
                .and_then(|n| n.attribute("value"))
        };
        assert_eq!(property("candidate_run_id"), Some("cand"));
    }

    #[test]
    fn hostile_cell_names_are_text_and_the_schema_still_holds() {
        let hostile = "a<b>&c\"d'e]]>f\u{1b}[2J\u{0}\u{7}\u{202e}\n\tg";
        let mut c = comparison(hostile);
        c.candidate.matrix = "m]]><x/>".into();
        c.baseline.path = "/tmp/\"><injected/>".into();
        let xml = document(&[c], &ctx());
        xmllint(&xml).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        assert!(!doc
            .descendants()
            .any(|n| n.has_tag_name("x") || n.has_tag_name("injected")));
        let case = doc
            .descendants()
            .find(|n| n.has_tag_name("testcase"))
            .unwrap();
        assert_eq!(case.attribute("classname"), Some("rmatrix.m]]><x/>"));
        assert_eq!(
            case.attribute("name"),
            Some("a<b>&c\"d'e]]>f\\u{1b}[2J\\u{0}\\u{7}\\u{202e}\n\tg / qps")
        );
        assert!(!xml.contains('\u{1b}') && !xml.contains('\u{0}'));
    }
}
