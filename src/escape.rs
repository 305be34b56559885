//! Text from outside rmatrix (a server's version or error message, a description pasted from a
//! blog post) made safe for the place it is printed.

fn push_visible(out: &mut String, c: char) {
    out.push_str(&format!("\\u{{{:x}}}", c as u32));
}

/// One character of Markdown inline text: markup characters are escaped so that nothing
/// from a run becomes a link, an image, HTML or a code span (`![x](url)` stays text);
/// `in_cell` also escapes the table's `|`. Emphasis (`*`, `_`) loads nothing and is left:
/// names such as `oltp_read_write` stay as they are written.
fn push_md(out: &mut String, c: char, in_cell: bool) {
    match c {
        '|' if in_cell => out.push_str("\\|"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '&' => out.push_str("&amp;"),
        '`' => out.push('\''),
        '\\' | '[' | ']' => {
            out.push('\\');
            out.push(c);
        }
        c if invisible(c) => push_visible(out, c),
        c if c.is_control() => out.push(' '),
        c => out.push(c),
    }
}

/// A bare `https://…` or `www.…` is a link on GitHub (its autolink extension): the escaped
/// `/` and `.` keep it text, and render as themselves.
fn no_autolinks(text: String) -> String {
    text.replace("://", ":\\/\\/").replace("www.", "www\\.")
}

/// For a Markdown table cell: control characters (newlines, terminal escapes) become spaces,
/// `|` is escaped, HTML, links, images and code-span characters are neutralised.
pub(crate) fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_md(&mut out, c, true);
    }
    no_autolinks(out)
}

/// A Markdown link destination (a path the user gave): in angle brackets, where spaces and
/// parentheses are text; `<`, `>` and control characters are percent-encoded.
pub(crate) fn md_link_dest(path: &str) -> String {
    let mut out = String::from("<");
    for c in path.chars() {
        match c {
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '\\' => out.push_str("%5C"),
            c if c.is_control() => out.push_str(&format!("%{:02X}", c as u32 & 0xff)),
            c => out.push(c),
        }
    }
    out.push('>');
    out
}

/// For a Markdown code span (`` `run-id` ``), where backslash escapes do not work: what
/// could end the span or the line goes (a backtick becomes `'`, a control character a
/// space, a `|` of a table is escaped), invisible characters are shown.
pub(crate) fn md_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '`' => out.push('\''),
            '|' => out.push_str("\\|"),
            c if invisible(c) => push_visible(&mut out, c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// For Markdown prose (a description): line breaks are kept, other control characters become
/// spaces, markup is neutralised as in a cell, and a line cannot start a heading, a list, a
/// quote or a rule (a pasted `# x` stays text).
pub(crate) fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches([' ', '\t']);
        out.push_str(&line[..line.len() - body.len()]);
        if body.starts_with(['#', '-', '+', '=']) {
            out.push('\\');
        }
        for c in body.chars() {
            push_md(&mut out, c, false);
        }
    }
    no_autolinks(out)
}

/// For HTML text and attribute values: the five markup characters become entities, control
/// characters other than line breaks and tabs become spaces.
pub(crate) fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if invisible(c) => push_visible(&mut out, c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Characters that show nothing yet change what is read (Unicode's format characters): zero
/// widths, the soft hyphen, and the bidirectional controls that make `abc` display as `cba`
/// (U+202E), so that a name or message looks other than it is.
pub(crate) fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// For the terminal (and error messages): control characters (escape sequences from a
/// server's error message, a newline in a name) and invisible ones are shown escaped instead
/// of interpreted.
pub(crate) fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else if invisible(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// For a multi-line message on the terminal (an error and its causes): `terminal`, but its
/// line breaks stay line breaks.
pub(crate) fn terminal_lines(text: &str) -> String {
    text.split('\n')
        .map(terminal)
        .collect::<Vec<_>>()
        .join("\n")
}

/// For JSON text from serde_json, which escapes only the C0 controls: DEL, the C1 controls
/// (`\u{9b}` is an 8-bit CSI) and the invisible characters become `\uXXXX` escapes too, the
/// same string to a JSON reader. A raw one can only be inside a string (the layout is
/// spaces and line breaks).
pub(crate) fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n') || invisible(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// For a label value of the Prometheus text format and OpenMetrics, inside its double
/// quotes: the formats' own escapes for `\`, `"` and a line feed; every other control or
/// invisible character is shown as `\u{..}` text (its backslash escaped in turn), so that
/// no raw one reaches a terminal or a parser.
pub(crate) fn metric_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() || invisible(c) => {
                out.push_str(&format!("\\\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// For XML text and attribute values (XML 1.0): the five markup characters become entities
/// (so a `]]>` is `]]&gt;`), line breaks and tabs character references (an attribute keeps
/// them), and what XML 1.0 cannot carry or a reader cannot see (the other controls,
/// U+FFFE and U+FFFF, invisible characters) is shown as `\u{..}` text.
pub(crate) fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if c.is_control() || invisible(c) || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                push_visible(&mut out, c)
            }
            c => out.push(c),
        }
    }
    out
}

/// For a free-text CSV value (a server's error message): a leading `=`, `+`, `-`, `@`, tab or
/// carriage return makes a spreadsheet read the cell as a formula, so such a value gets a
/// leading `'`, the spreadsheets' own mark for "text".
pub(crate) fn csv_text(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_labels_escape_what_the_format_escapes_and_show_the_rest() {
        assert_eq!(
            metric_label("a\"b\\c\nd}\u{1b}[2J\u{202e}"),
            "a\\\"b\\\\c\\nd}\\\\u{1b}[2J\\\\u{202e}"
        );
        assert_eq!(metric_label("mariadb-10.11"), "mariadb-10.11");
    }

    #[test]
    fn xml_text_and_attributes() {
        assert_eq!(
            xml("<a href=\"x\">'&']]>\n\t\u{1b}\u{0}\u{ffff}"),
            "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;]]&gt;&#10;&#9;\\u{1b}\\u{0}\\u{ffff}"
        );
    }

    #[test]
    fn csv_formulas_are_text() {
        assert_eq!(csv_text("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(csv_text("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_text("-1+2"), "'-1+2");
        assert_eq!(csv_text("ERROR 1064"), "ERROR 1064");
        assert_eq!(csv_text(""), "");
    }

    #[test]
    fn html_text() {
        assert_eq!(
            html("<a href=\"x\">'&'</a>\u{1b}[31m\n"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; [31m\n"
        );
    }

    #[test]
    fn links_images_and_emphasis_stay_text() {
        assert_eq!(
            md_cell("![x](https://e.example/p.png) [c](javascript:alert(1))"),
            "!\\[x\\](https:\\/\\/e.example/p.png) \\[c\\](javascript:alert(1))"
        );
        assert_eq!(md_cell("\\[x](y)"), "\\\\\\[x\\](y)");
        assert_eq!(md_cell("see www.example.com"), "see www\\.example.com");
        // What the escapes render as is the text itself.
        let html = |md: &str| {
            let mut out = String::new();
            pulldown_cmark::html::push_html(&mut out, pulldown_cmark::Parser::new(md));
            out
        };
        let hostile = "![x](https://e.example/p.png) [c](javascript:alert(1)) \\[d](x)";
        let rendered = html(&md_text(hostile));
        assert!(
            !rendered.contains("<a") && !rendered.contains("<img"),
            "{rendered}"
        );
        assert!(rendered.contains(hostile), "{rendered}");
    }

    #[test]
    fn json_strings_keep_their_text_without_raw_controls() {
        let s = serde_json::to_string(&"a\u{7f}\u{9b}2J\u{202e}b\u{1b}").unwrap();
        let safe = json(&s);
        assert_eq!(safe, r#""a\u007f\u009b2J\u202eb\u001b""#);
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "a\u{7f}\u{9b}2J\u{202e}b\u{1b}"
        );
    }

    #[test]
    fn invisible_characters_are_shown() {
        let spoof = "ok\u{200b}\u{202e}gnp.exe";
        assert_eq!(terminal(spoof), "ok\\u{200b}\\u{202e}gnp.exe");
        assert_eq!(md_cell(spoof), "ok\\u{200b}\\u{202e}gnp.exe");
        assert_eq!(html(spoof), "ok\\u{200b}\\u{202e}gnp.exe");
    }

    #[test]
    fn cells_and_text() {
        assert_eq!(
            md_cell("10.11 | <b>x</b>\n\u{1b}[31m`y`"),
            "10.11 \\| &lt;b&gt;x&lt;/b&gt;  \\[31m'y'"
        );
        assert_eq!(md_text("a\n<script>\u{7}"), "a\n&lt;script&gt; ");
        assert_eq!(md_code("run`\n# x"), "run' # x");
        assert_eq!(md_text("x\n# owned\n  - item"), "x\n\\# owned\n  \\- item");
        assert_eq!(terminal("ok \"x\""), "ok \"x\"");
        assert_eq!(terminal("bad \u{1b}[2J\nname"), "bad \\u{1b}[2J\\nname");
        assert_eq!(terminal("a\u{200b}b\u{202e}c"), "a\\u{200b}b\\u{202e}c");
        assert!(!invisible('a') && !invisible('é') && invisible('\u{2066}'));
    }
}
