//! The checks of `untrusted` and `params` whose valid texts are a regular language, as the
//! JSON Schema patterns the matrix's schema gives them (`rmatrix schema`), so that an editor
//! refuses what they refuse. Each is held to its function by the tests below. The patterns
//! keep to what ECMA-262 (with or without its `u` flag), Python's `re` and Rust's regex
//! engines read alike.

use serde_json::{json, Value};

use super::untrusted::MAX_DESCRIPTION_CHARS;

/// A parameter's name (`params::valid_name`), unanchored: it is also part of `${name}`.
pub(crate) const PARAMETER_NAME: &str = "[A-Za-z_][A-Za-z0-9_]{0,63}";

/// A `$` that starts neither `$${` nor `${`.
const LONE_DOLLAR: &str = r"\$(?!\$?\{)";

/// One piece of a value as `params::substitute` cuts it, each `$` read once: a character
/// other than `$` and those of `class` (a character class's inside, `\uXXXX` ranges), a
/// literal `$${`, a reference `${name}` or a lone `$`.
fn piece(class: &str) -> String {
    format!(r"[^${class}]|\$\$\{{|\$\{{{PARAMETER_NAME}\}}|{LONE_DOLLAR}")
}

/// Text whose every `${` starts a reference (or is a literal `$${`), without the characters
/// of `class`.
pub(crate) fn well_formed(class: &str) -> String {
    format!("^(?:{})*$", piece(class))
}

/// Text with at least one reference, all well formed.
pub(crate) fn with_reference() -> String {
    format!(r"^(?:{p})*\$\{{{PARAMETER_NAME}\}}(?:{p})*$", p = piece(""))
}

/// Exactly one reference: what a number or a boolean may be before substitution.
pub(crate) fn exactly_one_reference() -> String {
    format!(r"^\$\{{{PARAMETER_NAME}\}}$")
}

/// Text without any reference (a literal `$${` is fine).
pub(crate) fn no_reference() -> String {
    format!(r"^(?:[^$]|\$\$\{{|{LONE_DOLLAR})*$")
}

/// A name on a matrix axis, or of the matrix (`untrusted::name`).
pub(crate) const NAME: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
const NAME_RULE: &str = "letters, digits, `.`, `_` and `-`, starting with a letter or digit, \
                         at most 64 characters";

/// A plain SQL identifier (`untrusted::sql_identifier`).
pub(crate) const SQL_IDENTIFIER: &str = "^[A-Za-z_][A-Za-z0-9_]{0,63}$";
const SQL_IDENTIFIER_RULE: &str =
    "a plain SQL identifier: letters, digits and `_`, not starting with a digit, at most 64 \
     characters";

/// A server counter's name (`untrusted::counter_name`).
pub(crate) const COUNTER_NAME: &str = "^[A-Za-z0-9_.|:-]{1,128}$";
const COUNTER_NAME_RULE: &str = "letters, digits, `_`, `.`, `|`, `-` and `:`, at most 128";

/// The characters `untrusted::description` (`lines`) and `untrusted::unprintable` refuse, as
/// a character class's inside, `\uXXXX` each (the same in every engine). Those above U+FFFF
/// (tag characters) would need the `u` flag or surrogate pairs: the schema lets them through,
/// the loader does not.
fn invisible(lines: bool) -> String {
    let refused =
        |c: char| (c.is_control() && !(lines && c == '\n')) || crate::escape::invisible(c);
    let mut class = String::new();
    let mut chars = (0..=0xffff_u32).filter_map(char::from_u32).peekable();
    while let Some(first) = chars.next() {
        if !refused(first) {
            continue;
        }
        let mut last = first;
        while let Some(&next) = chars
            .peek()
            .filter(|&&c| refused(c) && c as u32 == last as u32 + 1)
        {
            last = next;
            chars.next();
        }
        class.push_str(&format!("\\u{:04X}", first as u32));
        if last != first {
            class.push_str(&format!("-\\u{:04X}", last as u32));
        }
    }
    class
}

/// The schema of the matrix's description.
pub(crate) fn description() -> Value {
    let mut text = text(
        &well_formed(&invisible(true)),
        "visible characters and line breaks: no control or invisible character",
    );
    text["maxLength"] = json!(MAX_DESCRIPTION_CHARS);
    text
}

/// A Docker build argument's name (`untrusted::build_arg_name`).
pub(crate) const BUILD_ARG_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
/// A Docker build argument's value (`untrusted::build_arg_value`).
pub(crate) const BUILD_ARG_VALUE: &str = "^(?!-)[A-Za-z0-9._+:~=-]{1,128}$";
const BUILD_ARG_VALUE_RULE: &str = "one word of letters, digits, `.`, `_`, `-`, `+`, `:`, `~` \
                                    and `=`, not starting with `-`, at most 128 characters";

/// One CPU of a CPU list: up to 4 digits, at most 1023 (`untrusted::cpuset`).
const CPU: &str = "(?:[0-9]{1,3}|0[0-9]{3}|10[01][0-9]|102[0-3])";
/// The most characters of a CPU list.
pub(crate) const MAX_CPUSET_CHARS: usize = 64;

/// A CPU list (`untrusted::cpuset`) but for the order of a range's ends (`3-1`).
pub(crate) fn cpuset() -> String {
    let part = format!("{CPU}(?:-{CPU})?");
    format!("^{part}(?:,{part})*$")
}

/// The schema of a server's `cpuset`.
pub(crate) fn cpuset_schema(schema: &mut schemars::Schema) {
    let mut list = text(
        &cpuset(),
        "a CPU list such as `1`, `0-1` or `0,2` (CPUs 0 to 1023)",
    );
    list["maxLength"] = json!(MAX_CPUSET_CHARS);
    list["type"]
        .as_array_mut()
        .expect("invariant: a text's types are a list")
        .push(json!("null"));
    if let (Some(to), Value::Object(from)) = (schema.as_object_mut(), list) {
        to.extend(from);
    }
}

/// The schema of build arguments (`build: {args: ...}`).
pub(crate) fn build_args(schema: &mut schemars::Schema) {
    let rule = "letters, digits and `_`, not starting with a digit";
    schema.insert(
        "propertyNames".into(),
        json!({"pattern": BUILD_ARG_NAME, "patternErrorMessage": rule}),
    );
    schema.insert("additionalProperties".into(), build_arg_value());
}

/// The schema of a build argument's value (and of a source build's `suite`).
pub(crate) fn build_arg_value() -> Value {
    text(BUILD_ARG_VALUE, BUILD_ARG_VALUE_RULE)
}

/// A whole number as `params::value` reads an int (`numbers::decimal`).
pub(crate) const INT: &str = "^-?[0-9]+$";
/// A number as `params::value` reads a float (`numbers::decimal` with a fraction).
pub(crate) const FLOAT: &str = r"^-?\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$";

/// A parameter's declaration: a default of its type (`params::value`), a description of one
/// line of visible text (at most its bytes in characters: the schema counts no bytes).
pub(crate) fn parameter(schema: &mut schemars::Schema) {
    let default_of = |ty: &str, default: Value| {
        json!({
            "if": {"properties": {"type": {"const": ty}}, "required": ["type"]},
            "then": {"properties": {"default": default}}
        })
    };
    let rules = json!([
        default_of(
            "int",
            json!({"type": ["integer", "string"], "pattern": INT})
        ),
        default_of(
            "float",
            json!({"type": ["number", "string"], "pattern": FLOAT})
        ),
        default_of("bool", json!({"enum": [true, false, "true", "false"]})),
    ]);
    schema.insert("allOf".into(), rules);
    if let Some(description) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("description"))
        .and_then(Value::as_object_mut)
    {
        // Set, not widened by the schema's walk: a pattern narrows the type it finds.
        description.insert(
            "type".into(),
            json!(["string", "number", "boolean", "null"]),
        );
        let visible = format!("^[^{}]*$", invisible(false));
        description.insert("pattern".into(), json!(visible));
        description.insert(
            "maxLength".into(),
            json!(super::params::MAX_DESCRIPTION_BYTES),
        );
    }
}

/// The schema of a value written into a config file or a container's environment: one line
/// of visible characters (`untrusted::config_value`).
pub(crate) fn one_line() -> Value {
    text(
        &well_formed(&invisible(false)),
        "one line of visible characters: no newline, control or invisible character",
    )
}

/// The schema of a text field (any scalar, read as its text) that `pattern` restricts, with
/// the message an editor shows instead of the pattern.
fn text(pattern: &str, rule: &str) -> Value {
    json!({
        "type": ["string", "number", "boolean"],
        "pattern": pattern,
        "patternErrorMessage": rule,
    })
}

/// The schema of a name (`untrusted::name`).
pub(crate) fn name() -> Value {
    text(NAME, NAME_RULE)
}

/// A key that is a name (of a server, config or workload).
pub(crate) fn name_key() -> Value {
    json!({"pattern": NAME, "patternErrorMessage": NAME_RULE})
}

/// The schema of a plain SQL identifier (`untrusted::sql_identifier`).
pub(crate) fn sql_identifier() -> Value {
    text(SQL_IDENTIFIER, SQL_IDENTIFIER_RULE)
}

/// The schema of a server counter's name (`untrusted::counter_name`).
pub(crate) fn counter_name() -> Value {
    text(COUNTER_NAME, COUNTER_NAME_RULE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::untrusted;

    /// The reference patterns read a value as `params::substitute` cuts it.
    #[test]
    fn the_reference_patterns_cut_a_value_as_the_parser_does() {
        let ok = well_formed("");
        let (text, one, none) = (with_reference(), exactly_one_reference(), no_reference());
        // (value, every `${` well formed, a reference in it, exactly one, none at all)
        let cases = [
            ("plain", true, false, false, true),
            ("$HOME and $", true, false, false, true),
            ("${tag}", true, true, true, false),
            ("mariadb:${tag}", true, true, false, false),
            ("${a}${b}", true, true, false, false),
            ("$${tag}", true, false, false, true),
            ("$$${tag}", true, false, false, true),
            ("$$$${tag}", true, false, false, true),
            ("$${${tag}", true, true, false, false),
            ("${9lives}", false, false, false, false),
            ("${bad-name}", false, false, false, false),
            ("${unclosed", false, false, false, false),
            ("${}", false, false, false, false),
            ("x${", false, false, false, false),
            ("$iters", true, false, false, true),
        ];
        for (value, well, has, exact, no) in cases {
            assert_eq!(matches(&ok, value), well, "well formed: {value}");
            assert_eq!(matches(&text, value), has, "with a reference: {value}");
            assert_eq!(matches(&one, value), exact, "exactly one: {value}");
            assert_eq!(matches(&none, value), no, "none: {value}");
        }
        let long = format!("${{{}}}", "a".repeat(64));
        let too_long = format!("${{{}}}", "a".repeat(65));
        assert!(matches(&one, &long) && !matches(&ok, &too_long));
    }

    fn matches(pattern: &str, text: &str) -> bool {
        jsonschema::is_valid(&json!({"pattern": pattern}), &json!(text))
    }

    /// Texts on both sides of each rule's edges.
    const SAMPLES: &[&str] = &[
        "",
        "a",
        "A9",
        "9a",
        "_x",
        "x_y",
        "a.b",
        "a-b",
        "-a",
        ".a",
        "a b",
        "a/b",
        "a\nb",
        "a|b",
        "Com_insert",
        "cmdstat_client|list",
        "cmdstat_set.usec",
        "x:y",
        "ü",
        "a\u{202e}b",
        "InnoDB",
        "MyISAM; DROP DATABASE mysql; --",
        "${x}",
        "bookworm",
        "1.2+dfsg-1~bpo12=x",
        "trixie'",
    ];

    #[test]
    fn a_cpu_list_is_what_cpuset_takes_but_for_the_order_of_a_range() {
        let list = cpuset();
        for s in [
            "1", "0-1", "0,2", "0,2-3,7", "1023", "0001", "1024", "01023", "", "1,", ",1", "1-",
            "a", "1 2", "1\n", "-1", "1-2-3", "0-1023",
        ] {
            assert_eq!(
                matches(&list, s),
                untrusted::cpuset(s).is_ok(),
                "cpuset {s:?}"
            );
        }
        assert!(matches(&list, "3-1") && untrusted::cpuset("3-1").is_err());
        let long = ["1"; 33].join(",");
        assert!(long.len() > MAX_CPUSET_CHARS && untrusted::cpuset(&long).is_err());
    }

    #[test]
    fn visible_text_is_what_the_checks_take() {
        let description = description()["pattern"].as_str().unwrap().to_string();
        let one_line = format!("^[^{}]*$", invisible(false));
        let samples = SAMPLES.iter().chain(&[
            "tab\there",
            "bell\u{7}",
            "del\u{7f}",
            "c1\u{85}",
            "soft\u{ad}hyphen",
            "zero\u{200b}width",
            "bom\u{feff}",
            "über café",
            "a line\nand another",
            "cost $5",
        ]);
        for s in samples {
            assert_eq!(
                matches(&description, s),
                untrusted::description(s).is_ok(),
                "description {s:?}"
            );
            assert_eq!(
                matches(&one_line, s),
                untrusted::unprintable(s).is_none(),
                "one line {s:?}"
            );
        }
    }

    #[test]
    fn each_pattern_refuses_what_its_check_refuses() {
        let long = |n: usize| "a".repeat(n);
        let mut samples: Vec<String> = SAMPLES.iter().map(|s| s.to_string()).collect();
        samples.extend([long(64), long(65), long(128), long(129)]);
        for s in &samples {
            assert_eq!(
                matches(NAME, s),
                untrusted::name("x", s).is_ok(),
                "name {s:?}"
            );
            assert_eq!(
                matches(SQL_IDENTIFIER, s),
                untrusted::sql_identifier("x", s).is_ok(),
                "sql identifier {s:?}"
            );
            assert_eq!(
                matches(COUNTER_NAME, s),
                untrusted::counter_name(s).is_ok(),
                "counter name {s:?}"
            );
            assert_eq!(
                matches(&format!("^{PARAMETER_NAME}$"), s),
                crate::input::params::valid_name(s),
                "parameter name {s:?}"
            );
            assert_eq!(
                matches(BUILD_ARG_NAME, s),
                untrusted::build_arg_name(s).is_ok(),
                "build argument name {s:?}"
            );
            assert_eq!(
                matches(BUILD_ARG_VALUE, s),
                untrusted::build_arg_value("x", s).is_ok(),
                "build argument value {s:?}"
            );
        }
    }
}
