//! summary.md's "Totals per operation" section for runs with a suite's operations.csv (sqlbench):
//! sql-bench's table, operations as rows and deployments (server / config) as columns,
//! mean seconds over iterations with their interval and the change against the baseline;
//! then the totals per test group. Lower is better.

use std::collections::BTreeMap;

use anyhow::Result;
use indexmap::IndexMap;

use crate::escape::md_cell;
use crate::matrix::model::Matrix;
use crate::model::Dimension;
use crate::results::operations::{read, OperationRow, OPERATIONS_CSV};
use crate::results::RunDir;
use crate::stats::{change, summarize, Confidence};

/// The section for the run in `dir`, or nothing when it has no operations.csv. Lines of
/// iterations that failed or were measured again are left out.
pub(crate) fn section(dir: &RunDir, m: &Matrix) -> Result<String> {
    let lines = read(&dir.file(OPERATIONS_CSV))?;
    if lines.is_empty() {
        return Ok(String::new());
    }
    let ok: std::collections::HashSet<(crate::model::CellKey, u32)> = dir
        .current_rows()?
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| (r.cell_key(), r.iteration))
        .collect();
    let (mix, suite): (Vec<OperationRow>, Vec<OperationRow>) = lines
        .into_iter()
        .filter(|l| ok.contains(&(l.cell_key(), l.iteration)))
        .partition(OperationRow::of_a_mix);
    let conf = m.report.confidence();
    let mut out = super::mix::render(m, &mix, conf);
    if !suite.is_empty() {
        out.push_str(&render(m, &suite, conf));
    }
    Ok(out)
}

/// One column: a deployment's seconds per row name, one value per iteration.
struct Column {
    server: String,
    config: String,
    /// Row name -> (iteration -> seconds).
    values: BTreeMap<String, BTreeMap<u32, f64>>,
}

impl Column {
    fn of(&self, row: &str) -> Vec<f64> {
        self.values
            .get(row)
            .map(|v| v.values().copied().collect())
            .unwrap_or_default()
    }
}

pub(crate) fn render(m: &Matrix, lines: &[OperationRow], conf: Confidence) -> String {
    // One pair of tables per workload, engine and concurrency; deployments as columns.
    let mut tables: IndexMap<(String, String, u32), Vec<&OperationRow>> = IndexMap::new();
    for l in lines {
        tables
            .entry((l.workload.clone(), l.engine.clone(), l.concurrency))
            .or_default()
            .push(l);
    }
    let mut out = String::from(
        "\n## Totals per operation\n\n\
         sql-bench's table: seconds per operation (lower is better), the mean over iterations; \
         ± is the interval of the mean at the report's confidence, relative to it. In \
         parentheses, the change against the baseline column, ",
    );
    out.push_str(&format!(
        "{}. Operations of one name in several test groups are added up, as sql-bench's \
         totals are; `tests` is sql-bench's loop count; TOTALS, as run-all-tests' last line, \
         adds up every timed operation (not the untimed set-up between them).\n",
        conf.legend()
    ));
    let many = tables.len() > 1;
    for ((workload, engine, concurrency), lines) in tables {
        if many {
            let what: Vec<String> = [workload.as_str(), engine.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| md_cell(s))
                .chain([format!("c{concurrency}")])
                .collect();
            out.push_str(&format!("\n### {}\n", what.join(" / ")));
        }
        let columns = columns(m, &lines);
        let mut tests: BTreeMap<String, u64> = BTreeMap::new();
        if let Some(first) = lines.first() {
            for l in lines.iter().filter(|l| {
                (l.server.as_str(), l.config.as_str(), l.iteration)
                    == (
                        first.server.as_str(),
                        first.config.as_str(),
                        first.iteration,
                    )
            }) {
                *tests.entry(l.operation.clone()).or_default() += l.loops;
            }
        }
        let names: Vec<String> = columns
            .iter()
            .flat_map(|c| c.values.keys().filter(|k| !k.starts_with(GROUP)))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        // run-all-tests ends its table with TOTALS: every operation's seconds and tests.
        let mut names = names;
        names.push(format!("{GROUP}TOTALS"));
        tests.insert(format!("{GROUP}TOTALS"), tests.values().sum());
        out.push('\n');
        out.push_str(&table(m, "operation", Some(&tests), &names, &columns, conf));
        let mut groups: Vec<String> = Vec::new();
        for l in &lines {
            let g = format!("{GROUP}{}", l.group);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        groups.push(format!("{GROUP}TOTALS"));
        out.push_str("\nTotals per test group (seconds of its timed operations):\n\n");
        out.push_str(&table(m, "test group", None, &groups, &columns, conf));
    }
    out
}

/// Row names of the group totals, apart from operation names.
const GROUP: &str = "\u{1}";

fn columns(m: &Matrix, lines: &[&OperationRow]) -> Vec<Column> {
    let mut cols: IndexMap<(String, String), Column> = IndexMap::new();
    for l in lines {
        let c = cols
            .entry((l.server.clone(), l.config.clone()))
            .or_insert_with(|| Column {
                server: l.server.clone(),
                config: l.config.clone(),
                values: BTreeMap::new(),
            });
        for row in [
            l.operation.clone(),
            format!("{GROUP}{}", l.group),
            format!("{GROUP}TOTALS"),
        ] {
            *c.values
                .entry(row)
                .or_default()
                .entry(l.iteration)
                .or_default() += l.seconds;
        }
    }
    let pos = |axis: Vec<String>, v: &str| axis.iter().position(|x| x == v).unwrap_or(usize::MAX);
    cols.sort_by_key(|(s, c), _| {
        (
            pos(m.axis(Dimension::Server), s),
            pos(m.axis(Dimension::Config), c),
        )
    });
    cols.into_values().collect()
}

/// The column each column is compared with: the matrix's baseline (its server and config
/// values), else the first column.
fn baseline<'a>(m: &Matrix, columns: &'a [Column], c: &Column) -> Option<&'a Column> {
    if m.report.baseline.is_empty() {
        return columns.first();
    }
    let want = |d: &str, own: &str| m.report.baseline.get(d).cloned().unwrap_or(own.to_string());
    columns
        .iter()
        .find(|b| b.server == want("server", &c.server) && b.config == want("config", &c.config))
}

fn table(
    m: &Matrix,
    first: &str,
    tests: Option<&BTreeMap<String, u64>>,
    rows: &[String],
    columns: &[Column],
    conf: Confidence,
) -> String {
    let mut header = vec![first.to_string()];
    if tests.is_some() {
        header.push("tests".into());
    }
    header.extend(
        columns
            .iter()
            .map(|c| md_cell(&format!("{} / {}", c.server, c.config))),
    );
    let mut out = format!(
        "| {} |\n|---|{}\n",
        header.join(" | "),
        "---:|".repeat(header.len() - 1)
    );
    for r in rows {
        let name = r.strip_prefix(GROUP).unwrap_or(r);
        let mut line = vec![md_cell(name)];
        if let Some(t) = tests {
            line.push(t.get(r).map(u64::to_string).unwrap_or_default());
        }
        for c in columns {
            line.push(cell(
                &c.of(r),
                baseline(m, columns, c)
                    .filter(|b| !std::ptr::eq(*b, c))
                    .map(|b| b.of(r)),
                conf,
            ));
        }
        out.push_str(&format!("| {} |\n", line.join(" | ")));
    }
    out
}

/// `1.234 ±2.0% (+5.1% *)`: mean seconds, its interval, the change against the baseline.
fn cell(values: &[f64], base: Option<Vec<f64>>, conf: Confidence) -> String {
    let Some(s) = summarize(values, conf) else {
        return "n/a".into();
    };
    let mut text = match s.half_width_pct() {
        Some(h) if s.n > 1 => format!("{} ±{h:.1}%", seconds(s.mean)),
        _ => format!("{} (n={})", seconds(s.mean), s.n),
    };
    if let Some(b) = base {
        match change(&b, values, None, conf) {
            Some(c) if conf.significant(c.p) => {
                text.push_str(&format!(" ({:+.1}% {})", c.pct, conf.mark(c.p)))
            }
            Some(c) => text.push_str(&format!(" ({:+.1}% ~)", c.pct)),
            None => {}
        }
    }
    text
}

/// Seconds to 3 decimals, more below 0.1 s so that short operations keep 2 or more
/// significant digits (sql-bench prints 2 decimals and rounds them to 0).
fn seconds(v: f64) -> String {
    let digits = if v > 0.0 {
        (2 - v.log10().floor() as i32).clamp(3, 6) as usize
    } else {
        3
    };
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(config: &str, it: u32, group: &str, op: &str, seconds: f64) -> OperationRow {
        OperationRow {
            server: "mariadb-10.11".into(),
            config: config.into(),
            engine: "InnoDB".into(),
            workload: "sb".into(),
            concurrency: 1,
            iteration: it,
            seq: 1,
            group: group.into(),
            operation: op.into(),
            loops: 100,
            statements: 100,
            seconds,
            ops_per_s: 100.0 / seconds,
            srv_questions: Some(100),
            srv_counters: "{}".into(),
            lat_p50_ms: None,
            lat_p95_ms: None,
            lat_p99_ms: None,
            lat_max_ms: None,
            errors: None,
        }
    }

    #[test]
    fn short_operations_keep_their_digits() {
        assert_eq!(seconds(28.17549), "28.175");
        assert_eq!(seconds(0.2641), "0.264");
        assert_eq!(seconds(0.0431), "0.0431");
        assert_eq!(seconds(0.00123), "0.00123");
        assert_eq!(seconds(0.000123456), "0.000123");
    }

    #[test]
    fn operations_as_rows_deployments_as_columns() {
        let m: Matrix = crate::input::yaml::from_str(
            "servers: {mariadb-10.11: {image: x}}\nconfigs: {system: {}, jemalloc: {}}\n\
             engines: [InnoDB]\nworkloads: {sb: {sqlbench: {}}}\n",
        )
        .unwrap();
        let mut lines = Vec::new();
        for (it, a, b) in [(1, 1.0, 2.0), (2, 1.1, 2.1), (3, 0.9, 1.9)] {
            lines.push(line("jemalloc", it, "insert", "insert", b));
            lines.push(line("system", it, "insert", "insert", a));
            lines.push(line("system", it, "select", "insert", a));
            lines.push(line("jemalloc", it, "select", "insert", b));
            lines.push(line("system", it, "select", "count<|>", 0.5));
            lines.push(line("jemalloc", it, "select", "count<|>", 0.5));
        }
        let text = render(&m, &lines, Confidence::default());
        assert!(
            text.contains(
                "| operation | tests | mariadb-10.11 / system | mariadb-10.11 / jemalloc |"
            ),
            "{text}"
        );
        // insert: 2.0 s (system) and 4.0 s (jemalloc) a run over both groups, 200 tests.
        let insert = text.lines().find(|l| l.starts_with("| insert |")).unwrap();
        assert!(insert.starts_with("| insert | 200 | 2.000 ±"), "{insert}");
        assert!(
            insert.ends_with("| 4.000 ±12.4% (+100.5% **) |"),
            "{insert}"
        );
        assert!(text.contains("| count&lt;\\|&gt; | 100 | 0.500 "), "{text}");
        assert!(text.contains("| select | "), "group totals: {text}");
        assert!(text.contains("| TOTALS | 2.500 ±"), "{text}");
        // As run-all-tests prints it: the last line of the operations' table, its tests
        // the sum of theirs (200 insert + 100 count<|>).
        let ops_table = text.split("Totals per test group").next().unwrap();
        let last = ops_table.lines().rfind(|l| l.starts_with('|')).unwrap();
        assert!(last.starts_with("| TOTALS | 300 | 2.500 ±"), "{last}");
    }
}
