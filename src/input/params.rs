//! Matrix parameters (`params:`): what the block declares, the value of each (`--set`, else
//! `RMATRIX_PARAM_<name>`, else the default), and their substitution into the matrix text.
//!
//! Substitution rewrites the text scalar by scalar, at the byte spans of the parser events the
//! span index reads, so that whatever is reported afterwards keeps its line (a value holds no
//! newline), and nothing in a value can change the document's structure: a scalar holding a
//! reference becomes one escaped double-quoted scalar or, when it is exactly one reference to a
//! number or a bool, that plain literal. The result holds no `${` (a literal one is written
//! `\x24{`), so substituting it again changes nothing.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_saphyr::granit_parser::{Event, ScalarStyle};

use super::span::{Pos, SpanIndex};
use super::untrusted::{printable, unprintable};

/// The environment variable of a parameter is this prefix and its name as declared.
pub(crate) const ENV_PREFIX: &str = "RMATRIX_PARAM_";
/// Longest text value, in bytes.
pub(crate) const MAX_VALUE_BYTES: usize = 1024;
/// Most parameters a matrix declares.
pub(crate) const MAX_PARAMS: usize = 64;
/// Longest description, in bytes (it is quoted in messages).
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 256;
/// The most bytes a matrix may have with its references substituted, as many as its file
/// may have: a few thousand `${x}` of a long value would otherwise make hundreds of MB.
pub(crate) const MAX_EXPANDED_BYTES: usize = super::yaml::MAX_FILE_BYTES as usize;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ParamType {
    #[default]
    String,
    Int,
    Float,
    Bool,
}

/// One entry of `params:`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::patterns::parameter)]
pub(crate) struct ParamSpec {
    #[serde(default, rename = "type")]
    pub(crate) ty: ParamType,
    /// Read as text (`3` and `true` too) and checked against `type`.
    #[serde(default)]
    pub(crate) default: Option<String>,
    #[serde(default)]
    pub(crate) description: Option<String>,
}

/// The declarations, in the order of the file.
pub(crate) type Declared = IndexMap<String, ParamSpec>;

/// Why parameters could not be read, given or substituted.
#[derive(Debug, PartialEq)]
pub(crate) enum ParamError {
    /// About a place in the text.
    At(Pos, String),
    /// About a value from the command line or the environment, or a missing one.
    Value(String),
    /// The text does not read as a matrix outside `params:`: the matrix's own reading says why,
    /// in its words.
    Elsewhere,
}

/// Only the `params:` block; every other key is left to the matrix's own reading.
#[derive(Deserialize)]
struct Block {
    #[serde(default)]
    params: Declared,
}

/// What `text` (indexed in `spans`) declares, checked.
pub(crate) fn declared(text: &str, spans: &SpanIndex) -> Result<Declared, ParamError> {
    // The rest is skipped untyped, where a `.nan` is refused; a typed field may hold one.
    let mut options = super::yaml::options();
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    let read = serde_saphyr::from_str_with_options::<Block>(text, options);
    let block = read.map_err(|e| {
        let (pos, message) = super::yaml::describe(&e, spans, text, &[]);
        let path = spans.path_at(pos);
        match path == "params" || path.starts_with("params.") {
            true => ParamError::At(pos, message),
            false => ParamError::Elsewhere,
        }
    })?;
    check(&block.params, spans).map_err(|(pos, m)| ParamError::At(pos, m))?;
    Ok(block.params)
}

/// The checks serde's types do not make: names, descriptions, defaults against their type.
pub(crate) fn check(params: &Declared, spans: &SpanIndex) -> Result<(), (Pos, String)> {
    if params.len() > MAX_PARAMS {
        return Err((
            spans.key("params"),
            format!(
                "the matrix declares {} parameters: at most {MAX_PARAMS}",
                params.len()
            ),
        ));
    }
    for (name, spec) in params {
        let at = |field: &str| spans.find(&format!("params.{name}.{field}"));
        if !valid_name(name) {
            return Err((
                spans.key(&format!("params.{name}")),
                format!(
                    "parameter name `{}` must be letters, digits and `_`, not starting with a \
                     digit, at most 64 characters: it is written `${{name}}` and in \
                     {ENV_PREFIX}name",
                    shown(name)
                ),
            ));
        }
        let fields = [
            ("description", &spec.description),
            ("default", &spec.default),
        ];
        for (field, text) in fields {
            if text.as_deref().is_some_and(|t| t.contains("${")) {
                return Err((at(field), IN_PARAMS.into()));
            }
        }
        if let Some(d) = &spec.description {
            if let Some(c) = unprintable(d) {
                return Err((
                    at("description"),
                    format!(
                        "the description of parameter `{name}` holds a control or invisible \
                         character ({}): write one line of visible text",
                        c.escape_unicode()
                    ),
                ));
            }
            if d.len() > MAX_DESCRIPTION_BYTES {
                return Err((
                    at("description"),
                    format!(
                        "the description of parameter `{name}` is longer than \
                         {MAX_DESCRIPTION_BYTES} bytes"
                    ),
                ));
            }
        }
        if let Some(d) = &spec.default {
            value(spec.ty, d).map_err(|why| {
                (
                    at("default"),
                    format!("the default of parameter `{name}` {why}"),
                )
            })?;
        }
    }
    Ok(())
}

const IN_PARAMS: &str = "`params:` cannot hold `${`: a parameter's default and description are \
                         taken as written, never substituted";

/// `[A-Za-z_][A-Za-z0-9_]{0,63}`.
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value as the text will hold it (an int without leading zeros), or why `text` is not one
/// of type `ty` ("is an int: ...").
pub(crate) fn value(ty: ParamType, text: &str) -> Result<String, String> {
    let not = shown(text);
    match ty {
        ParamType::String => {
            if let Some(c) = unprintable(text) {
                return Err(format!(
                    "is text: one line of visible characters, and `{not}` holds a newline, \
                     another control character or an invisible one ({})",
                    c.escape_unicode()
                ));
            }
            if text.len() > MAX_VALUE_BYTES {
                return Err(format!(
                    "is text of at most {MAX_VALUE_BYTES} bytes; this value has {}",
                    text.len()
                ));
            }
            Ok(text.to_string())
        }
        ParamType::Int => super::numbers::decimal(text, false)
            .then(|| text.parse::<i64>().ok())
            .flatten()
            .map(|n| n.to_string())
            .ok_or_else(|| {
                format!(
                    "is an int: a whole number in decimal digits such as 3 (64 bits, signed), \
                     not `{not}`"
                )
            }),
        ParamType::Float => super::numbers::decimal(text, true)
            .then(|| text.parse::<f64>().ok())
            .flatten()
            .filter(|f| f.is_finite())
            .map(|_| text.to_string())
            .ok_or_else(|| format!("is a float: a finite number such as 2.5 or 1e3, not `{not}`")),
        ParamType::Bool => match text {
            "true" | "false" => Ok(text.to_string()),
            _ => Err(format!("is a bool: true or false, not `{not}`")),
        },
    }
}

/// `text` for a message: control characters escaped, at most 80 characters.
fn shown(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push_str("...");
    }
    printable(&s)
}

/// "declared: a, b", for the messages about a name.
fn declared_names(declared: &Declared) -> String {
    match declared.is_empty() {
        true => "the matrix declares no parameters (`params:`)".into(),
        false => format!(
            "declared: {}",
            declared.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    }
}

/// `NAME=VALUE` of a `--set`, or None without an `=`.
pub(crate) fn split_set(arg: &str) -> Option<(String, String)> {
    arg.split_once('=')
        .map(|(n, v)| (n.to_string(), v.to_string()))
}

/// The value of every declared parameter: from `set` (the `--set` pairs), else from `env`
/// (`RMATRIX_PARAM_<name>`; `Err` when not UTF-8), else its default.
pub(crate) fn values(
    declared: &Declared,
    set: &[(String, String)],
    env: &dyn Fn(&str) -> Result<Option<String>, ()>,
) -> Result<IndexMap<String, String>, ParamError> {
    let refuse = |m: String| Err(ParamError::Value(m));
    for (i, (name, _)) in set.iter().enumerate() {
        if !declared.contains_key(name) {
            return refuse(format!(
                "--set {}: the matrix declares no parameter `{}`; {}",
                shown(name),
                shown(name),
                declared_names(declared)
            ));
        }
        if set[..i].iter().any(|(n, _)| n == name) {
            return refuse(format!(
                "--set {name} is given twice: give each parameter once"
            ));
        }
    }
    let mut out = IndexMap::new();
    for (name, spec) in declared {
        let var = format!("{ENV_PREFIX}{name}");
        let given = match set.iter().find(|(n, _)| n == name) {
            Some((_, v)) => Some((format!("--set {name}"), v.clone())),
            None => match env(&var) {
                Ok(v) => v.map(|v| (var.clone(), v)),
                Err(()) => return refuse(format!("{var} is not UTF-8 text")),
            },
        };
        let (from, text) = match (given, &spec.default) {
            (Some(g), _) => g,
            (None, Some(d)) => (format!("the default of `{name}`"), d.clone()),
            (None, None) => {
                let about = spec
                    .description
                    .as_deref()
                    .map(|d| format!(" ({})", printable(d)))
                    .unwrap_or_default();
                return refuse(format!(
                    "parameter `{name}`{about} has no value and no default: give it with \
                     `--set {name}=VALUE` or the environment variable {var}"
                ));
            }
        };
        let v = value(spec.ty, &text)
            .map_err(|why| ParamError::Value(format!("{from}: parameter `{name}` {why}")))?;
        out.insert(name.clone(), v);
    }
    Ok(out)
}

/// Where a node stands, which says what it may hold.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Value,
    Key,
    Params,
}

struct Frame {
    map: bool,
    /// A mapping's next node is a key.
    key_next: bool,
    /// The place of the collection, which its nodes inherit.
    place: Place,
}

#[derive(Default)]
struct Walk {
    stack: Vec<Frame>,
    /// The last node was the top-level key `params`.
    params_next: bool,
}

impl Walk {
    /// The place of the node that starts now (`scalar`: its value, to see `params`).
    fn place(&mut self, scalar: Option<&str>) -> Place {
        let depth = self.stack.len();
        let Some(top) = self.stack.last_mut() else {
            return Place::Value;
        };
        let inherited = top.place;
        if top.map {
            top.key_next = !top.key_next;
            if !top.key_next {
                self.params_next = depth == 1 && scalar == Some("params");
                return match inherited {
                    Place::Value => Place::Key,
                    other => other,
                };
            }
        }
        match std::mem::take(&mut self.params_next) {
            true => Place::Params,
            false => inherited,
        }
    }
}

/// `text` with every reference replaced by its value (`values`: one for each of `declared`);
/// `text` as it is when no scalar holds `${`.
pub(crate) fn substitute(
    text: &str,
    declared: &Declared,
    values: &IndexMap<String, String>,
) -> Result<String, ParamError> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    let mut parser = super::span::parser(text);
    let mut walk = Walk::default();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    // The text's size with the edits so far made.
    let mut size = text.len();
    // A syntax error ends the walk: the matrix's own reading reports it.
    while let Some(Ok((ev, span))) = parser.next_event() {
        match ev {
            Event::Scalar(value, style, _, _) => {
                let place = walk.place(Some(&value));
                let pos = Pos {
                    line: span.start.line(),
                    col: span.start.col() + 1,
                };
                let range = span.start.byte_offset().zip(span.end.byte_offset());
                let Some((raw, (start, end))) =
                    range.and_then(|(s, e)| Some((text.get(s..e)?, (s, e))))
                else {
                    return Err(ParamError::At(
                        pos,
                        "failed to find this value in the text".into(),
                    ));
                };
                if raw.contains("${") {
                    // In document order, never overlapping: what the rewrite below relies on.
                    if edits.last().is_some_and(|(_, e, _)| *e > start) {
                        return Err(ParamError::At(
                            pos,
                            "failed to find this value in the text".into(),
                        ));
                    }
                    let scalar = Scalar { raw, style, pos };
                    // The rest of the text is `size - raw.len()`: what the new scalar may be.
                    let rest = size - raw.len();
                    let budget = MAX_EXPANDED_BYTES.saturating_sub(rest);
                    let new = scalar.rewrite(place, declared, values, budget)?;
                    size = rest + new.len();
                    edits.push((start, end, new));
                }
            }
            Event::Alias(_) => {
                walk.place(None);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let place = walk.place(None);
                walk.stack.push(Frame {
                    map: matches!(ev, Event::MappingStart(..)),
                    key_next: true,
                    place,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                walk.stack.pop();
            }
            _ => {}
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new) in edits {
        out.push_str(&text[at..start]);
        out.push_str(&new);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// One scalar of the text that holds `${`, as written (quotes included).
struct Scalar<'a> {
    raw: &'a str,
    style: ScalarStyle,
    pos: Pos,
}

/// A part of a scalar: text as written, a literal `${` (written `$${`), a reference.
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Text(&'a str),
    Dollar,
    Ref(&'a str),
}

impl Scalar<'_> {
    /// What replaces the scalar in the text, refused as soon as it is longer than `budget`.
    fn rewrite(
        &self,
        place: Place,
        declared: &Declared,
        values: &IndexMap<String, String>,
        budget: usize,
    ) -> Result<String, ParamError> {
        let too_large = || {
            ParamError::At(
                self.pos,
                format!(
                    "with its parameters substituted here the matrix is larger than \
                     {MAX_EXPANDED_BYTES} bytes, the most a matrix may be: reference long \
                     values fewer times"
                ),
            )
        };
        let refuse = |m: &str| Err(ParamError::At(self.pos, m.to_string()));
        match place {
            Place::Key => {
                return refuse(
                    "a key cannot hold `${`: parameters are substituted into values, not keys",
                )
            }
            Place::Params => return refuse(IN_PARAMS),
            Place::Value => {}
        }
        if matches!(self.style, ScalarStyle::Literal | ScalarStyle::Folded) {
            return refuse(
                "a block scalar (`|` or `>`) cannot hold `${`: write the value on one line, in \
                 quotes if need be",
            );
        }
        if self.raw.contains(['\n', '\r']) {
            return refuse(
                "a value written over several lines cannot hold `${`: write it on one line",
            );
        }
        let body = match self.style {
            ScalarStyle::Plain => self.raw,
            _ => (self.raw.get(1..self.raw.len().saturating_sub(1))).unwrap_or_default(),
        };
        let pieces = pieces(body, values)
            .map_err(|m| ParamError::At(self.pos, format!("{m}; {}", declared_names(declared))))?;
        // `pieces` found every name among the values.
        let value = |name: &str| values.get(name).map_or("", String::as_str);
        if let [Piece::Ref(name)] = pieces[..] {
            if declared
                .get(name)
                .is_some_and(|d| d.ty != ParamType::String)
            {
                let v = value(name);
                return match v.len() > budget {
                    true => Err(too_large()),
                    false => Ok(v.to_string()),
                };
            }
        }
        let mut out = String::from("\"");
        for p in pieces {
            match p {
                Piece::Text(t) => match self.style {
                    ScalarStyle::DoubleQuoted => out.push_str(t),
                    ScalarStyle::SingleQuoted => escape_into(&mut out, &t.replace("''", "'")),
                    _ => escape_into(&mut out, t),
                },
                Piece::Dollar => out.push_str("${"),
                Piece::Ref(name) => escape_into(&mut out, value(name)),
            }
            // The replacement below only lengthens it.
            if out.len() > budget {
                return Err(too_large());
            }
        }
        out.push('"');
        // `$` is never part of an escape, so `\x24` may stand for any of them.
        let out = out.replace("${", "\\x24{");
        match out.len() > budget {
            true => Err(too_large()),
            false => Ok(out),
        }
    }
}

/// `body` (a scalar without its quotes) cut at its `$${` and `${name}` (a name of `values`),
/// or what is wrong.
fn pieces<'a>(body: &'a str, values: &IndexMap<String, String>) -> Result<Vec<Piece<'a>>, String> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        let (before, after) = rest.split_at(i);
        if !before.is_empty() {
            out.push(Piece::Text(before));
        }
        if let Some(tail) = after.strip_prefix("$${") {
            out.push(Piece::Dollar);
            rest = tail;
        } else if let Some(inner) = after.strip_prefix("${") {
            let Some(end) = inner.find('}') else {
                return Err(
                    "`${` is not closed by `}`: write `${name}`, or `$${` for a literal `${`"
                        .into(),
                );
            };
            let name = &inner[..end];
            if !valid_name(name) {
                return Err(format!(
                    "`${{{}}}` does not name a parameter (letters, digits and `_`, not starting \
                     with a digit); write `$${{` for a literal `${{`",
                    shown(name)
                ));
            }
            if !values.contains_key(name) {
                return Err(format!("`${{{name}}}` names no declared parameter"));
            }
            out.push(Piece::Ref(name));
            rest = &inner[end + 1..];
        } else {
            out.push(Piece::Text("$"));
            rest = &after[1..];
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    Ok(out)
}

/// `s` as the inside of a YAML double-quoted scalar.
fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || crate::escape::invisible(c) => {
                let n = c as u32;
                out.push_str(&match n {
                    0..=0xff => format!("\\x{n:02x}"),
                    0x100..=0xffff => format!("\\u{n:04x}"),
                    _ => format!("\\U{n:08x}"),
                });
            }
            c => out.push(c),
        }
    }
}

/// A syntax error at `pos` right after `${` unquoted: in `[...]` or `{...}` a plain `${x}` is
/// a `$` and a mapping, so the parser's message says nothing of parameters.
pub(crate) fn unquoted_reference(text: &str, pos: Pos) -> bool {
    let Some(line) = text.lines().nth(pos.line.saturating_sub(1)) else {
        return false;
    };
    let chars: Vec<char> = line.chars().collect();
    let at = pos.col.saturating_sub(1);
    at >= 1 && chars.get(at - 1) == Some(&'$') && chars.get(at) == Some(&'{')
}

#[cfg(test)]
mod tests;
