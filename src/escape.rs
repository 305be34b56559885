//! Text from outside rmatrix (a server's version or error message, a description pasted from a
//! blog post) made safe for the place it is printed.

/// For a Markdown table cell: control characters (newlines, terminal escapes) become spaces,
/// `|` is escaped, HTML and code-span characters are neutralised.
pub(crate) fn md_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// For Markdown prose (a description): line breaks are kept, other control characters become
/// spaces, and HTML is neutralised so a pasted `<script>` stays text.
pub(crate) fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' => out.push('\n'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
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
        if c.is_control() || invisible(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
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
    fn cells_and_text() {
        assert_eq!(
            md_cell("10.11 | <b>x</b>\n\u{1b}[31m`y`"),
            "10.11 \\| &lt;b&gt;x&lt;/b&gt;  [31m'y'"
        );
        assert_eq!(md_text("a\n<script>\u{7}"), "a\n&lt;script&gt; ");
        assert_eq!(terminal("ok \"x\""), "ok \"x\"");
        assert_eq!(terminal("bad \u{1b}[2J\nname"), "bad \\u{1b}[2J\\nname");
        assert_eq!(terminal("a\u{200b}b\u{202e}c"), "a\\u{200b}b\\u{202e}c");
        assert!(!invisible('a') && !invisible('é') && invisible('\u{2066}'));
    }
}
