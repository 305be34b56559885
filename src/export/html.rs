//! HTML: one self-contained page (inline CSS and SVG; no script, font or anything else to
//! fetch) with what the Markdown output says, the charts drawn in place, and for a run its
//! manifest: host, images, each deployment's version, effective config and verified
//! variants. The Markdown is the single source of the tables; it is converted here with raw
//! HTML in it shown as text, so nothing from a run reaches the page as markup.

use std::collections::HashMap;
use std::fmt::Write as _;

use anyhow::{anyhow, Result};
use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

use super::markdown::Markdown;
use super::{Exporter, RunView};
use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::join::{Comparison, Verdict};
use crate::escape::html;
use crate::report::chart::bars::{self, Bar, BarChart};
use crate::report::chart::NamedChart;
use crate::results::manifest::Manifest;

pub(crate) struct Html;

impl Exporter for Html {
    fn needs_matrix(&self) -> bool {
        // The Markdown's tables, rendered from the matrix's `report:` block.
        true
    }

    fn run(&self, run: &RunView) -> Result<String> {
        let m = run
            .matrix
            .ok_or_else(|| anyhow!("invariant: the HTML report needs the matrix"))?;
        let charts = crate::report::summary::draw_charts(run.dir, m)?;
        run_page(run, charts)
    }

    /// The Markdown comparison, then a chart of each comparison's changes.
    fn compare(&self, diffs: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        let md = Markdown.compare(diffs, comparisons)?;
        let mut body = String::from("<h1>rmatrix compare</h1>\n");
        for c in comparisons {
            let chart = change_chart(c);
            if chart.bars.is_empty() {
                continue;
            }
            match bars::svg(&chart) {
                Ok(svg) => {
                    let _ = writeln!(body, "<figure>{svg}</figure>");
                }
                Err(e) => eprintln!("warning: comparison chart left out: {e:#}"),
            }
        }
        // The differential flame graphs the Markdown links, inlined.
        let flames: HashMap<String, String> = (comparisons.iter())
            .flat_map(|c| &c.profiles)
            .map(|p| (p.file.clone(), p.svg.clone()))
            .collect();
        body.push_str(&markdown_to_html(&md, &flames));
        Ok(page("rmatrix compare", &body))
    }

    fn history(&self, diffs: &[EnvDiff], history: &History) -> Result<String> {
        let md = Markdown.history(diffs, history)?;
        Ok(page(
            "rmatrix history",
            &markdown_to_html(&md, &HashMap::new()),
        ))
    }
}

/// A run's page with its charts already drawn (`run` draws them once for charts/ and this).
pub(crate) fn run_page(run: &RunView, charts: Vec<NamedChart<String>>) -> Result<String> {
    let m = run
        .matrix
        .ok_or_else(|| anyhow!("invariant: the HTML report needs the matrix"))?;
    let md = crate::report::summary::render_linking(run.dir, m, run.template, &|_| true)?;
    let charts: HashMap<String, String> = charts
        .into_iter()
        .map(|c| (format!("charts/{}", c.file), c.chart))
        .collect();
    let mut body = markdown_to_html(&md, &charts);
    body.push_str(&manifest_section(run.dir));
    let name = m.name.as_deref().unwrap_or("run");
    Ok(page(&format!("rmatrix: {name}"), &body))
}

/// One bar per compared cell and metric, in the comparison's order, coloured by verdict.
pub(crate) fn change_chart(c: &Comparison) -> BarChart {
    let several_metrics = c
        .changes
        .iter()
        .any(|ch| c.changes.first().is_some_and(|f| f.metric != ch.metric));
    BarChart {
        title: format!(
            "Change from {} to {}",
            crate::escape::terminal(&c.baseline.run_id),
            crate::escape::terminal(&c.candidate.run_id)
        ),
        x_label: "change from the baseline (its interval as a whisker)".into(),
        threshold_pct: Some(c.threshold_pct),
        legend: bars::Verdict::legend(),
        bars: c
            .changes
            .iter()
            .filter_map(|ch| {
                let label = match several_metrics {
                    true => format!("{} ({})", ch.cell, ch.metric),
                    false => ch.cell.clone(),
                };
                let verdict = match ch.verdict {
                    Verdict::Regressed => bars::Verdict::Regressed,
                    Verdict::Improved => bars::Verdict::Improved,
                    Verdict::Small => bars::Verdict::Small,
                    Verdict::Unchanged => bars::Verdict::Unchanged,
                    Verdict::CannotTell => bars::Verdict::CannotTell,
                };
                Some(Bar {
                    label: crate::escape::terminal(&label),
                    value: ch.change_pct?,
                    interval: ch.ci_low_pct.zip(ch.ci_high_pct),
                    fill: verdict.fill(),
                })
            })
            .collect(),
    }
}

/// Markdown to HTML. Raw HTML in the text is shown as text; an image whose target is one of
/// `charts` becomes that inline SVG, any other image is left out (nothing is fetched); a
/// link that is not http(s) or an anchor keeps its text only.
pub(crate) fn markdown_to_html(md: &str, charts: &HashMap<String, String>) -> String {
    let mut events: Vec<Event> = Vec::new();
    let mut skipping_image = false;
    let mut dropped_links = 0usize;
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        if skipping_image {
            skipping_image = !matches!(ev, Event::End(TagEnd::Image));
            continue;
        }
        match ev {
            Event::Html(t) | Event::InlineHtml(t) => events.push(Event::Text(t)),
            Event::Start(Tag::Image { dest_url, .. }) => {
                if let Some(svg) = charts.get(dest_url.as_ref()) {
                    events.push(Event::Html(CowStr::from(format!("<figure>{svg}</figure>"))));
                }
                skipping_image = true;
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if !safe_link(link_type, &dest_url) => dropped_links += 1,
            Event::End(TagEnd::Link) if dropped_links > 0 => dropped_links -= 1,
            ev => events.push(ev),
        }
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

fn safe_link(kind: LinkType, dest: &str) -> bool {
    let d = dest.trim_start().to_ascii_lowercase();
    !matches!(kind, LinkType::Email)
        && (d.starts_with("https://") || d.starts_with("http://") || d.starts_with('#'))
}

/// rmatrix's version and the commit it was built from.
fn rmatrix_build(man: &Manifest) -> String {
    let commit = match (man.rmatrix_commit.as_str(), man.rmatrix_dirty) {
        ("", _) => String::new(),
        (c, Some(true)) => format!(", commit {c} with uncommitted changes"),
        (c, _) => format!(", commit {c}"),
    };
    format!("{}{commit}", man.rmatrix_version)
}

/// The manifest: host, engine, images, and per deployment its version, status, effective
/// config file and the variants checked against the running server.
fn manifest_section(dir: &crate::results::RunDir) -> String {
    let man: Manifest = crate::report::summary::stored_manifest(dir).unwrap_or_default();
    let mut s = String::from("<h2>Manifest</h2>\n<table class=\"facts\">\n");
    let h = &man.host;
    let mut fact = |k: &str, v: &str| {
        let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", html(k), html(v));
    };
    fact("run", &man.run_id);
    fact("started", &man.started_at);
    fact(
        "finished",
        man.finished_at.as_deref().unwrap_or("not finished"),
    );
    fact("rmatrix", &rmatrix_build(&man));
    for (name, t) in &man.tools {
        fact(name, &format!("{} ({})", t.version, t.program));
    }
    fact(
        "host",
        &format!(
            "{} — {} × {}, {:.1} GiB, {}, {}",
            h.hostname,
            h.cpus,
            h.cpu_model,
            h.memory_bytes as f64 / (1u64 << 30) as f64,
            h.kernel,
            h.os
        ),
    );
    if let Some(d) = &man.docker {
        fact("docker", &format!("{} (API {})", d.version, d.api_version));
    }
    fact(
        "iterations",
        &format!("{} ok, {} failed", man.iterations_ok, man.iterations_failed),
    );
    s.push_str("</table>\n");
    if !man.images.is_empty() {
        s.push_str("<h3>Images</h3>\n<table><tr><th>server</th><th>reference</th><th>id</th><th>origin</th></tr>\n");
        for (server, i) in &man.images {
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                html(server),
                html(&i.reference),
                html(&i.id),
                html(&i.origin)
            );
        }
        s.push_str("</table>\n");
    }
    for d in &man.deployments {
        let slug = crate::model::slug(&format!("{}__{}", d.server, d.config));
        let folder = dir.path.join("servers").join(&slug);
        let _ = writeln!(
            s,
            "<h3>{} / {}</h3>\n<p>{} — {}{}</p>",
            html(&d.server),
            html(&d.config),
            html(d.version.as_deref().unwrap_or("version unknown")),
            html(&format!("{:?}", d.status).to_lowercase()),
            d.error
                .as_deref()
                .map(|e| format!(": {}", html(e)))
                .unwrap_or_default()
        );
        s.push_str(&verified_table(&folder.join("verified.json")));
        // Each family's rendered config file, where the deployment has one; one that is a
        // link (to whatever file of this machine) or too large is said and left out.
        for name in crate::servers::config::config_blocks().map(|b| b.file) {
            match server_file(&folder.join(name)) {
                Ok(text) => {
                    let _ = writeln!(
                        s,
                        "<details><summary>{}</summary><pre>{}</pre></details>",
                        html(name),
                        html(&text)
                    );
                }
                Err(e) if e.is_missing() => {}
                Err(e) => eprintln!("warning: a server's config file left out: {e}"),
            }
        }
    }
    s
}

/// A deployment's stored file, through the one capped reader.
fn server_file(path: &std::path::Path) -> Result<String, crate::input::file::FileError> {
    crate::input::file::read_text(path, crate::input::file::SERVER_FILE)
}

/// The variants checked by read-back (verified.json), as a table.
fn verified_table(path: &std::path::Path) -> String {
    #[derive(serde::Deserialize)]
    struct Check {
        #[serde(default)]
        setting: String,
        #[serde(default)]
        variable: String,
        #[serde(default)]
        expected: serde_json::Value,
        #[serde(default)]
        actual: serde_json::Value,
        #[serde(default)]
        status: String,
    }
    let Some(checks) = server_file(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<Check>>(&t).ok())
    else {
        return String::new();
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        v => v.to_string(),
    };
    let mut s = String::from(
        "<table><tr><th>setting</th><th>variable</th><th>expected</th><th>actual</th><th>status</th></tr>\n",
    );
    for c in checks {
        let class = if c.status == "ok" { "ok" } else { "bad" };
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
            html(&c.setting),
            html(&c.variable),
            html(&text(&c.expected)),
            html(&text(&c.actual)),
            html(&c.status)
        );
    }
    s.push_str("</table>\n");
    s
}

const CSS: &str = "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}\
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}\
td.ok{color:#1a7f37}td.bad{color:#b42318;font-weight:600}\
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #e5e5e5}\
pre,code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}pre{background:#f6f8fa;padding:.6em;overflow:auto}\
h1,h2,h3{line-height:1.2}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}";

/// The page around `body`; `title` is escaped here.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
        html(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text_and_charts_are_inlined() {
        let charts: HashMap<String, String> = [(
            "charts/a.svg".to_string(),
            "<svg id=\"a\"></svg>".to_string(),
        )]
        .into();
        let md = "# T\n\n<script>alert(1)</script>\n\n![A](charts/a.svg)\n\n![B](https://x/b.png)\n\n\
                  [bad](javascript:alert(1)) [ok](https://mariadb.org)\n\n| a | b |\n|---|---|\n| <b>1</b> | 2 |\n";
        let out = markdown_to_html(md, &charts);
        assert!(!out.contains("<script"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(
            out.contains("<figure><svg id=\"a\"></svg></figure>"),
            "{out}"
        );
        assert!(!out.contains("x/b.png"), "{out}");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains(">bad<") || out.contains("bad "), "{out}");
        assert!(out.contains("href=\"https://mariadb.org\""), "{out}");
        assert!(out.contains("<table>") && !out.contains("<b>"), "{out}");
    }

    #[test]
    fn the_page_is_self_contained() {
        let p = page("a <b>", "<p>x</p>");
        assert!(p.contains("<title>a &lt;b&gt;</title>"));
        assert!(!p.contains("<script") && !p.contains("<link") && !p.contains("src="));
    }
}
