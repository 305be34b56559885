//! summary.md's "Transactions per type" section for runs of a mix (tpcc's operations.csv
//! lines): each type's rate with its interval over the iterations, its share of the mix, its
//! 95th percentile latency and the deadlocks it was retried after, deployments as columns.
//! tpmC is the New-Order rate times 60.

use indexmap::IndexMap;

use crate::escape::md_cell;
use crate::matrix::model::Matrix;
use crate::model::Dimension;
use crate::results::operations::OperationRow;
use crate::stats::{summarize, Confidence};

/// The section, or nothing when no line is of a mix.
pub(crate) fn render(m: &Matrix, lines: &[OperationRow], conf: Confidence) -> String {
    if lines.is_empty() {
        return String::new();
    }
    // One table per workload, engine and concurrency (and a heading each when several).
    let mut tables: IndexMap<(&str, &str, u32), Vec<&OperationRow>> = IndexMap::new();
    for l in lines {
        let key = (l.workload.as_str(), l.engine.as_str(), l.concurrency);
        tables.entry(key).or_default().push(l);
    }
    let mut out = format!(
        "\n## Transactions per type\n\n\
         Each transaction type of the mix: transactions ended per second (committed, and \
         New-Order's intended rollbacks), the mean over iterations ± the {}% interval of the \
         mean (n=1: one iteration, no interval); its share of all transactions; the mean of \
         the iterations' 95th percentile latency; the deadlocks and serialization failures it \
         was retried after. tpmC is New-Order's rate x 60.\n",
        (conf.level() * 1000.0).round() / 10.0
    );
    let many = tables.len() > 1;
    for ((workload, engine, concurrency), lines) in tables {
        if many {
            let what: Vec<String> = [workload, engine]
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| md_cell(s))
                .chain([format!("c{concurrency}")])
                .collect();
            out.push_str(&format!("\n### {}\n", what.join(" / ")));
        }
        out.push('\n');
        out.push_str(&table(m, &lines, conf));
    }
    out
}

/// Types as rows (in the order the mix names them), deployments as columns.
fn table(m: &Matrix, lines: &[&OperationRow], conf: Confidence) -> String {
    let mut types: Vec<&str> = Vec::new();
    let mut columns: IndexMap<(&str, &str), Vec<&OperationRow>> = IndexMap::new();
    for l in lines {
        if !types.contains(&l.operation.as_str()) {
            types.push(&l.operation);
        }
        let key = (l.server.as_str(), l.config.as_str());
        columns.entry(key).or_default().push(l);
    }
    let pos = |axis: Vec<String>, v: &str| axis.iter().position(|x| x == v).unwrap_or(usize::MAX);
    columns.sort_by_key(|(s, c), _| {
        (
            pos(m.axis(Dimension::Server), s),
            pos(m.axis(Dimension::Config), c),
        )
    });
    let mut out = String::from("| type |");
    for (server, config) in columns.keys() {
        out.push_str(&format!(" {} |", md_cell(&format!("{server} / {config}"))));
    }
    out.push_str(&format!("\n|---|{}\n", "---:|".repeat(columns.len())));
    for t in types {
        out.push_str(&format!("| {} |", md_cell(t)));
        for lines in columns.values() {
            out.push_str(&format!(" {} |", cell(lines, t, conf)));
        }
        out.push('\n');
    }
    out
}

/// `412.3/s ±2.1% · 44.9% · p95 9.81 ms · 3 retried`, over the deployment's iterations.
fn cell(lines: &[&OperationRow], txn: &str, conf: Confidence) -> String {
    let own: Vec<&&OperationRow> = lines.iter().filter(|l| l.operation == txn).collect();
    let rates: Vec<f64> = own.iter().map(|l| l.ops_per_s).collect();
    let Some(s) = summarize(&rates, conf) else {
        return "n/a".into();
    };
    let mut text = match s.half_width_pct() {
        Some(h) if s.n > 1 => format!("{:.1}/s ±{h:.1}%", s.mean),
        _ => format!("{:.1}/s (n={})", s.mean, s.n),
    };
    let all: u64 = lines.iter().map(|l| l.loops).sum();
    let mine: u64 = own.iter().map(|l| l.loops).sum();
    if all > 0 {
        text.push_str(&format!(" · {:.1}%", 100.0 * mine as f64 / all as f64));
    }
    let p95: Vec<f64> = own.iter().filter_map(|l| l.lat_p95_ms).collect();
    if !p95.is_empty() {
        let mean = p95.iter().sum::<f64>() / p95.len() as f64;
        text.push_str(&format!(" · p95 {mean:.2} ms"));
    }
    let retried: u64 = own.iter().filter_map(|l| l.errors).sum();
    if retried > 0 {
        text.push_str(&format!(" · {retried} retried"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(server: &str, it: u32, txn: &str, loops: u64, p95: f64) -> OperationRow {
        OperationRow {
            server: server.into(),
            config: "default".into(),
            engine: "InnoDB".into(),
            workload: "tpcc".into(),
            concurrency: 4,
            iteration: it,
            seq: 1,
            group: "tpcc".into(),
            operation: txn.into(),
            loops,
            statements: loops * 10,
            seconds: 10.0,
            ops_per_s: loops as f64 / 10.0,
            srv_questions: None,
            srv_counters: "{}".into(),
            lat_p50_ms: Some(p95 / 2.0),
            lat_p95_ms: Some(p95),
            lat_p99_ms: Some(p95 * 2.0),
            lat_max_ms: Some(p95 * 4.0),
            errors: Some(u64::from(it == 2)),
        }
    }

    #[test]
    fn one_row_per_type_one_column_per_deployment() {
        let m: Matrix = crate::input::yaml::from_str(
            "servers: {a: {image: x}, b: {image: y}}\nconfigs: {default: {}}\n\
             workloads: {tpcc: {tpcc: {}}}\n",
        )
        .unwrap();
        let lines = vec![
            line("b", 1, "new_order", 400, 8.0),
            line("b", 1, "payment", 600, 4.0),
            line("a", 1, "new_order", 450, 6.0),
            line("a", 1, "payment", 550, 2.0),
            line("a", 2, "new_order", 550, 10.0),
            line("a", 2, "payment", 450, 4.0),
        ];
        let text = render(&m, &lines, Confidence::default());
        let table: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table[0], "| type | a / default | b / default |");
        assert!(
            table[2].starts_with("| new_order | 50.0/s ±"),
            "{}",
            table[2]
        );
        assert!(
            table[2].ends_with(
                "· 50.0% · p95 8.00 ms · 1 retried | 40.0/s (n=1) · 40.0% · p95 8.00 ms |"
            ),
            "{}",
            table[2]
        );
        assert_eq!(table.len(), 4);
        assert!(render(&m, &[], Confidence::default()).is_empty());
    }
}
