//! The one YAML parser (serde-saphyr, over granit-parser): the options every matrix is read
//! with (duplicate keys refused, merge keys expanded, budgets against deep nesting and alias
//! bombs) and the translation of its errors into what the user wrote and what is valid.

use serde::de::DeserializeOwned;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Budget, DuplicateKeyPolicy, Error, MergeKeyPolicy, Options};

use super::span::{Pos, SpanIndex, Syntax};
use crate::escape::terminal;

/// Largest matrix file read: a study is a few KiB; `/dev/zero` is refused after 1 MiB.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Deepest nesting of lists and mappings (a matrix needs 6).
pub(crate) const MAX_DEPTH: usize = 32;
/// Most nodes (scalars, lists, mappings), after alias expansion.
pub(crate) const MAX_NODES: usize = 250_000;
/// Most aliases (`*name`) in a file.
pub(crate) const MAX_ALIASES: usize = 10_000;
/// Most events replayed from aliases (stops a billion laughs early).
pub(crate) const MAX_REPLAYED: usize = 100_000;

/// The options every rmatrix YAML text is read with.
pub(crate) fn options() -> Options {
    let mut budget = Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    budget.max_aliases = MAX_ALIASES;
    budget.max_documents = 1;
    budget.max_reader_input_bytes = Some(MAX_FILE_BYTES as usize);
    let mut o = Options::default();
    o.budget = Some(budget);
    o.duplicate_keys = DuplicateKeyPolicy::Error;
    o.merge_keys = MergeKeyPolicy::Merge;
    o.alias_limits.max_total_replayed_events = MAX_REPLAYED;
    o.alias_limits.max_replay_stack_depth = MAX_DEPTH;
    o.with_snippet = false;
    o.reject_unsupported_tags = true;
    // YAML 1.2, as before: `on`, `off`, `yes` and `no` are names (configs called `on`), not booleans.
    o.strict_booleans = true;
    o
}

/// Deserialise one document with rmatrix's options.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(text, options())
}

/// Where an error is and what it means for the user: serde's internal names (struct and
/// variant names, `newtype variant`) are replaced by the path in the file and plain words.
/// `workload_kinds` names the kinds a workload may be (the registry is above this layer).
pub(crate) fn describe(
    err: &Error,
    spans: &SpanIndex,
    text: &str,
    workload_kinds: &[&str],
) -> (Pos, String) {
    let err = err.without_snippet();
    let location = err.location();
    // The text the error is about, as written (a scalar), for "not `...`".
    let written = location
        .and_then(|l| {
            let span = l.span();
            let start = span.byte_offset()? as usize;
            let len = span.byte_len()? as usize;
            text.get(start..start.checked_add(len)?)
        })
        .filter(|t| !t.is_empty() && t.len() <= 80 && !t.contains('\n'))
        .map(|t| format!("`{}`", terminal(t)));
    let pos = location
        .filter(|l| l.line() > 0)
        .map(|l| Pos {
            line: l.line() as usize,
            col: (l.column() as usize).max(1),
        })
        .unwrap_or(Pos { line: 1, col: 1 });
    // The innermost value at the error, e.g. `workloads.w.slap`.
    let path = match err {
        Error::SerdeInvalidType { .. } | Error::Unexpected { .. } => spans.container_at(pos),
        _ => spans.path_at(pos),
    };
    // A list or mapping found where a scalar belongs is named, not quoted.
    let written = spans.container_kind_at(pos).map(str::to_string).or(written);
    let parts: Vec<&str> = path.split('.').collect();
    if parts.len() == 2 && parts[0] == "workloads" {
        if let Error::SerdeInvalidType { .. } | Error::Unexpected { .. } = err {
            return (pos, workload_shape(parts[1], workload_kinds));
        }
    }
    if let Error::AliasError { error, .. } = err {
        return describe(error, spans, text, workload_kinds);
    }
    (pos, message(err, spans, pos, &path, written.as_deref()))
}

/// What `err` at `pos` means, about the value at `path` (`written`: that value as the file
/// has it, when it is short enough to quote). An alias error is described by what it wraps,
/// at that error's own position (`describe`).
fn message(err: &Error, spans: &SpanIndex, pos: Pos, path: &str, written: Option<&str>) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    let at = |p: &str| match p {
        "" => "the matrix".to_string(),
        p => format!("`{}`", terminal(p)),
    };
    match err {
        Error::DuplicateMappingKey { key, .. } => match key {
            Some(k) => format!(
                "`{}` is defined twice{}: each key may appear once",
                terminal(k),
                parent_of(path, k)
            ),
            None => "a key is defined twice in this mapping: each key may appear once".into(),
        },
        Error::SerdeUnknownField {
            field, expected, ..
        } => format!(
            "unknown field `{}`{}; valid fields: {}",
            terminal(field),
            parent_of(path, field),
            expected.join(", ")
        ),
        Error::SerdeUnknownVariant {
            variant, expected, ..
        } => unknown_variant(path, variant, expected),
        Error::SerdeMissingField { field, .. } => {
            // The error is at the mapping's last key (or at an empty mapping itself).
            let map = match spans.container_kind_at(pos) {
                Some(_) => spans.container_at(pos),
                None => parent(path),
            };
            format!("{} needs `{field}`", at(&map))
        }
        Error::InvalidBooleanStrict { .. } => {
            invalid(path, written.unwrap_or("something else"), "a boolean")
        }
        Error::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | Error::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => invalid(path, written.unwrap_or(unexpected), expected),
        Error::SerdeInvalidLength { expected, .. } => {
            format!("{} must be {}", at(path), plain_expected(expected))
        }
        Error::InvalidScalar { ty, .. } => invalid(path, written.unwrap_or("this value"), ty),
        Error::Unexpected { expected, .. } => invalid(
            path,
            written.unwrap_or("something else"),
            match *expected {
                "mapping start" | "empty mapping start" => "a map",
                "sequence start" => "a sequence",
                "string scalar" | "scalar" => "a string",
                other => other,
            },
        ),
        Error::NullIntoString { .. } => format!("{} is empty: give a value", at(path)),
        Error::Message { msg, .. } => match parts.as_slice() {
            [""] => terminal(msg),
            ["workloads", name] => format!("workload `{}`: {}", terminal(name), terminal(msg)),
            _ => format!("`{}`: {}", terminal(path), terminal(msg)),
        },
        Error::Budget { breach, .. } => budget(breach),
        Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => format!(
            "aliases expand to more than {MAX_REPLAYED} nodes: write the matrix out instead"
        ),
        Error::MergeValueNotMapOrSeqOfMaps { .. } => {
            "a merge key `<<` must name a mapping (`<<: *base`) or a list of them".into()
        }
        Error::MultipleDocuments { .. } => {
            "a matrix file holds one YAML document: remove the second `---`".into()
        }
        Error::UnknownAnchor { .. } => {
            "an alias (`*name`) names no anchor (`&name`) defined above it".into()
        }
        Error::UnsupportedTag { tag, .. } => format!(
            "the tag `{}` is not supported (rmatrix has no `!include` or other tags)",
            terminal(tag)
        ),
        Error::Eof { .. } => "the file ends where a value was expected".into(),
        Error::InvalidUtf8Input => "the file is not UTF-8 text".into(),
        Error::ExternalMessage { msg, .. } => format!("YAML syntax: {}", terminal(msg)),
        other => terminal(&other.to_string()),
    }
}

/// `servers.db` for `servers.db.image`, `exclude[0]` for `exclude[0].engine`.
fn parent(path: &str) -> String {
    match path.rfind(['.', '[']) {
        Some(i) => path[..i].to_string(),
        None => String::new(),
    }
}

/// " in `configs.on.mycnf`" when the path ends with the key itself.
fn parent_of(path: &str, key: &str) -> String {
    let parent = path
        .strip_suffix(key)
        .map(|p| p.trim_end_matches('.'))
        .unwrap_or(path);
    match parent {
        "" => String::new(),
        p => format!(" in `{}`", terminal(p)),
    }
}

fn workload_shape(name: &str, kinds: &[&str]) -> String {
    format!(
        "workload `{}` must name one driver with its options, e.g. `{name}: {{{}: {{}}}}`; \
         valid drivers: {}",
        terminal(name),
        kinds.first().unwrap_or(&"kind"),
        kinds.join(", ")
    )
}

fn unknown_variant(path: &str, variant: &str, expected: &[&str]) -> String {
    // A workload's kind: `w: {slapp: {}}` (the error points at the kind, the key itself).
    let parts: Vec<&str> = path.split('.').collect();
    if parts.len() == 3 && parts[0] == "workloads" && parts[2] == variant {
        let variant = terminal(variant);
        return format!(
            "workload `{}` names an unknown driver `{variant}`; valid drivers: {}",
            terminal(parts[1]),
            expected.join(", ")
        );
    }
    let variant = terminal(variant);
    let list = expected
        .iter()
        .map(|e| format!("`{e}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match path {
        "" => format!("unknown value `{variant}`; expected one of {list}"),
        p => format!(
            "unknown value `{variant}` for `{}`; expected one of {list}",
            terminal(p)
        ),
    }
}

fn invalid(path: &str, unexpected: &str, expected: &str) -> String {
    let found = plain_unexpected(unexpected);
    let what = plain_expected(expected);
    match path {
        "" => format!("the matrix must be {what}, not {found}"),
        p => format!("`{}` must be {what}, not {found}", terminal(p)),
    }
}

/// serde's description of a Rust type, in the matrix's words.
fn plain_expected(expected: &str) -> String {
    let e = expected.trim();
    if let Some(name) = e.strip_prefix("struct ") {
        return match name {
            "Matrix" => "a mapping of matrix settings (servers, workloads, length, ...)".into(),
            _ => "a mapping of settings".into(),
        };
    }
    match e {
        "u8" | "u16" | "u32" | "u64" | "usize" => {
            let max = match e {
                "u8" => u8::MAX as u64,
                "u16" => u16::MAX as u64,
                "u32" => u32::MAX as u64,
                _ => u64::MAX,
            };
            format!("a whole number from 0 to {max}")
        }
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a sequence" => "a list".into(),
        "a map" => "a mapping".into(),
        "a boolean" => "true or false".into(),
        "a string" => "text".into(),
        other if other.starts_with("a sequence") => "a list".into(),
        other if other.starts_with("option") => "a value".into(),
        other => terminal(other),
    }
}

/// serde's description of what was found, without its internal names.
fn plain_unexpected(unexpected: &str) -> String {
    let u = unexpected.trim();
    match u {
        "unit variant" | "newtype variant" | "tuple variant" | "struct variant" => {
            "a single word".into()
        }
        "map" => "a mapping".into(),
        "sequence" => "a list".into(),
        "unit" | "null" => "empty".into(),
        other if other.starts_with('`') => other.to_string(),
        other => terminal(other),
    }
}

fn budget(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { .. } => format!(
            "lists and mappings are nested more than {MAX_DEPTH} deep: a matrix needs no more \
             than 6"
        ),
        BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => format!(
            "the matrix has more than {MAX_NODES} values (after expanding aliases): split it"
        ),
        BudgetBreach::Aliases { .. } | BudgetBreach::AliasAnchorRatio { .. } => format!(
            "the matrix uses too many aliases (at most {MAX_ALIASES}, and at most 10 per anchor)"
        ),
        BudgetBreach::Documents { .. } => {
            "a matrix file holds one YAML document: remove the second `---`".into()
        }
        BudgetBreach::InputBytes { .. } => {
            format!("the matrix file is larger than {MAX_FILE_BYTES} bytes")
        }
        other => format!("the matrix is too large to read ({other:?})"),
    }
}

/// A syntax error in the parser's words, with where the bracket that is not closed opened.
pub(crate) fn syntax(e: &Syntax) -> String {
    let msg = terminal(&e.message);
    if msg.contains("nesting limit") || msg.contains("recursion limit") {
        return format!(
            "lists and mappings are nested more than {MAX_DEPTH} deep: a matrix needs no more \
             than 6"
        );
    }
    let mut out = format!("YAML syntax: {msg}");
    if msg.contains("tab") {
        out.push_str(" (YAML indents with spaces only)");
    }
    if msg.contains("unknown anchor") {
        return "an alias (`*name`) names no anchor (`&name`) defined above it".into();
    }
    let about_brackets = msg.contains("flow") || msg.contains("expected ','");
    if let Some((bracket, at)) = e.open.last().filter(|_| about_brackets) {
        out.push_str(&format!(
            " (the `{bracket}` opened at line {}, column {} is not closed)",
            at.line, at.col
        ));
    }
    out
}

/// One YAML scalar as the user wrote it, for the fields that accept several types (a my.cnf
/// value, a run length). Lists and mappings are `Other`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Str(String),
    Bool(bool),
    Int(i128),
    Float(f64),
    Null,
    /// A list or mapping, named for the error message.
    Other(&'static str),
}

impl Scalar {
    /// The value as text, as YAML wrote it (`1`, `1.5`, `true`), or None for null or a
    /// list/mapping.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Scalar::Str(s) => Some(s.clone()),
            Scalar::Bool(b) => Some(b.to_string()),
            Scalar::Int(n) => Some(n.to_string()),
            Scalar::Float(f) => Some(format!("{f:?}")),
            Scalar::Null | Scalar::Other(_) => None,
        }
    }
}

/// Any value: what is not a scalar is read too, to be refused in the matrix's words.
impl schemars::JsonSchema for Scalar {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scalar".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!(true)
    }
}

impl<'de> serde::Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v.into()))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Scalar, E> {
                i128::try_from(v)
                    .map(Scalar::Int)
                    .map_err(|_| E::custom("the number is too large"))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar::Str(v))
            }
            fn visit_unit<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
                serde::Deserialize::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other("a list"))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Scalar, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Scalar::Other("a mapping"))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_for_rust_types() {
        assert_eq!(plain_expected("u32"), "a whole number from 0 to 4294967295");
        assert_eq!(plain_expected("struct SlapSpec"), "a mapping of settings");
        assert_eq!(plain_unexpected("unit variant"), "a single word");
    }
}
