//! Flame graphs of the server's profiles (`profiles/`, folded stacks): one per profiled cell,
//! and the differential one `compare --profiles` draws from a baseline's and a candidate's
//! stacks (red where the candidate spent more of its samples, blue where less). Drawn by
//! `inferno`, without its JavaScript (the HTML report inlines charts): each frame's title
//! still tells its samples.

use anyhow::{Context, Result};

/// One flame graph: its title and its folded lines (one count each, or two: differential).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Flame {
    pub(crate) title: String,
    pub(crate) folded: String,
}

pub(crate) fn svg(f: &Flame) -> Result<String> {
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = f.title.clone();
    // perf script weighs each cpu-clock sample by its period: CPU nanoseconds.
    opts.count_name = "ns of CPU".into();
    opts.no_javascript = true;
    // The same stacks give the same picture (colors by name, not at random).
    opts.hash = true;
    opts.deterministic = true;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, f.folded.lines(), &mut out)
        .context("failed to draw the flame graph")?;
    let text = String::from_utf8(out).context("the flame graph is not UTF-8")?;
    static_svg(&text)
}

/// The SVG as a picture, nothing to run: from `<svg` on, like the other charts (the XML
/// declaration and DOCTYPE inferno writes first would be stray text inlined in the HTML
/// report), without the `<script>` element `no_javascript` still writes (its settings) and
/// the root's `onload` that calls into it.
fn static_svg(text: &str) -> Result<String> {
    let Some(at) = text.find("<svg") else {
        anyhow::bail!("the flame graph has no <svg> element");
    };
    let mut svg = text[at..].replace(" onload=\"init(evt)\"", "");
    while let Some(start) = svg.find("<script") {
        let Some(len) = svg[start..].find("</script>") else {
            anyhow::bail!("the flame graph has an unclosed <script>");
        };
        svg.replace_range(start..start + len + "</script>".len(), "");
    }
    Ok(svg)
}

/// The differential stacks of `before` and `after` (`stack before after` lines), the
/// baseline scaled to the candidate's sample count so that the colours show shares, not
/// how long each profile ran.
pub(crate) fn differential(before: &str, after: &str) -> Result<String> {
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: true,
    };
    let mut out = Vec::new();
    inferno::differential::from_readers(opts, before.as_bytes(), after.as_bytes(), &mut out)
        .context("failed to join the two profiles")?;
    String::from_utf8(out).context("the joined profiles are not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flame_graph_and_a_differential_one_are_svg_without_script() {
        let before = "mariadbd;do_command;write_row 10\nmariadbd;do_command;fsync 10\n";
        let after = "mariadbd;do_command;write_row 10\nmariadbd;do_command;fsync 30\n\
                     mariadbd;do_command;<script>alert(1)</script> 1\n";
        for folded in [after.to_string(), differential(before, after).unwrap()] {
            let text = svg(&Flame {
                title: "t".into(),
                folded,
            })
            .unwrap();
            let doc = roxmltree::Document::parse(&text).unwrap();
            assert!(
                doc.descendants().all(|n| n.tag_name().name() != "script"),
                "no script element: {text}"
            );
            assert!(text.contains("fsync"), "{text}");
            assert!(!text.contains("onload"), "{text}");
        }
        let d = differential(before, after).unwrap();
        // The baseline's 20 samples scaled to the candidate's 41 (integer counts).
        assert!(d.contains("mariadbd;do_command;fsync 20 30"), "{d}");
    }
}
