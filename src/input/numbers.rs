//! Numbers written as numbers. serde-saphyr reads a quoted `"0x10"` into a number field as 16
//! and `1_0` as 10, so a matrix pasted from a blog post could mean other than it shows. After
//! a matrix is read, each number it holds is looked up in the text: it must be a plain scalar
//! of decimal digits (a fraction or exponent where the field takes one).

use super::span::{Pos, SpanIndex};
use crate::escape::terminal;

/// The first number in `value` (the read matrix, serialised) that the text does not write as
/// a plain decimal number, with its position and what to write. Values the text does not hold
/// at the same path (defaults, expanded levels, aliases) are not looked up.
pub(crate) fn check(value: &serde_json::Value, spans: &SpanIndex) -> Result<(), (Pos, String)> {
    walk(value, String::new(), spans)
}

/// The numbers the matrix holds in another form than it was read in (the geometric steps
/// `{from, factor, to}` of `concurrency` and `load.rate` are read into their levels): each
/// `(path, example, takes a fraction)` looked up in the text the same way.
pub(crate) fn check_paths(
    spans: &SpanIndex,
    paths: &[(&str, &str, bool)],
) -> Result<(), (Pos, String)> {
    for (path, example, fraction) in paths {
        written(spans, path, example, *fraction)?;
    }
    Ok(())
}

/// Refused when the text has the scalar at `path` other than as a plain decimal number.
fn written(
    spans: &SpanIndex,
    path: &str,
    example: &str,
    fraction: bool,
) -> Result<(), (Pos, String)> {
    match spans.scalar(path) {
        Some(w) if !(w.plain && decimal(&w.text, fraction)) => {
            let shown = match w.plain {
                true => w.text.clone(),
                false => format!("\"{}\"", w.text),
            };
            Err((
                spans.find(path),
                format!(
                    "`{}` must be a number written in decimal digits, such as `{example}`, not \
                     `{}`: quotes, `0x`, `0o` and `_` are not read as numbers",
                    terminal(path),
                    terminal(&shown)
                ),
            ))
        }
        _ => Ok(()),
    }
}

fn walk(value: &serde_json::Value, path: String, spans: &SpanIndex) -> Result<(), (Pos, String)> {
    match value {
        serde_json::Value::Number(n) => written(spans, &path, &n.to_string(), n.is_f64()),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| walk(v, format!("{path}[{i}]"), spans)),
        serde_json::Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            let p = match path.is_empty() {
                true => k.clone(),
                false => format!("{path}.{k}"),
            };
            walk(v, p, spans)
        }),
        _ => Ok(()),
    }
}

/// `-12` (or, where a fraction is allowed, `1.5`, `.5`, `2e3`).
pub(crate) fn decimal(text: &str, fraction: bool) -> bool {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let t = text.strip_prefix('-').unwrap_or(text);
    if !fraction {
        return digits(t);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let (mantissa, exponent) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (t, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((a, b)) => {
            (digits(a) || a.is_empty())
                && (digits(b) || b.is_empty())
                && !(a.is_empty() && b.is_empty())
        }
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_spellings() {
        for ok in ["0", "16", "-3"] {
            assert!(decimal(ok, false), "{ok}");
        }
        for bad in ["0x10", "1_0", "0o17", "+5", "1.0", "", "-", "1e3"] {
            assert!(!decimal(bad, false), "{bad}");
        }
        for ok in ["1.5", ".5", "2.", "2e3", "1.5E-2", "-0.9", "3"] {
            assert!(decimal(ok, true), "{ok}");
        }
        for bad in [".", ".inf", ".nan", "1_0.5", "0x1p3", "1e", "e3"] {
            assert!(!decimal(bad, true), "{bad}");
        }
    }

    #[test]
    fn quoted_and_odd_numbers_are_found_where_they_are() {
        let text = "a: 3\nb: \"0x10\"\nc: [1, 1_0]\n";
        let spans = SpanIndex::build(text);
        let value = serde_json::json!({"a": 3, "b": 16, "c": [1, 10]});
        let (pos, msg) = check(&value, &spans).unwrap_err();
        assert_eq!((pos.line, pos.col), (2, 4));
        assert!(msg.starts_with("`b` must be a number"), "{msg}");
        assert!(msg.contains("not `\"0x10\"`"), "{msg}");
        let value = serde_json::json!({"a": 3, "b": "0x10", "c": [1, 10]});
        let (pos, msg) = check(&value, &spans).unwrap_err();
        assert_eq!((pos.line, pos.col), (3, 8));
        assert!(msg.contains("`c[1]`") && msg.contains("not `1_0`"), "{msg}");
        // A default the text does not hold is not looked up.
        assert!(check(&serde_json::json!({"z": 1}), &spans).is_ok());
        let spans = SpanIndex::build("c: {from: '1', factor: 2, to: 8}\n");
        let (_, msg) =
            check_paths(&spans, &[("c.factor", "2", true), ("c.from", "1", false)]).unwrap_err();
        assert!(
            msg.starts_with("`c.from` must be") && msg.contains("not `\"1\"`"),
            "{msg}"
        );
    }
}
