//! The JSON Schema of a matrix file (`rmatrix schema`, shipped as `matrices/matrix.schema.json`),
//! derived by schemars from the very serde types the matrix is read into, so that an editor's
//! completion and checks cannot drift from the parser. The types carry the bounds and words
//! the loader checks where a schema can state them (`#[schemars(...)]` beside each field, the
//! same constants as the checks); three adjustments make it describe the YAML text rather
//! than JSON:
//! - a string field reads any scalar as its text (`image: 11`, `name: true`), as serde-saphyr
//!   does, so such a field accepts numbers and booleans too;
//! - a matrix may write `${name}` for any value (its parameters, substituted before it is
//!   read), so every value a string could not fill (a number, a boolean, a closed set of
//!   words, a pattern) also accepts a string that refers to a parameter (`references`);
//! - a workload is a map of one key, its kind, whose options the kind's schema checks
//!   (`kinds`), so that a wrong kind reads as one in an editor.

use serde_json::{json, Map, Value};

use super::model::Matrix;

pub(super) mod fields;
mod kinds;
mod references;

/// Where the shipped schema lives, relative to the repository (and to the shipped matrices).
pub const SHIPPED: &str = "matrices/matrix.schema.json";

/// The schema's `$id`: a name, not an address anything is fetched from (editors load the
/// schema from the file a matrix's first line names). It changes only if the file's meaning
/// does, never with a release.
pub const ID: &str = "https://rmatrix.dev/schema/matrix.schema.json";

/// Where definitions live: draft 7's `definitions`, the draft editors' YAML language servers
/// support best.
const DEFINITIONS: &str = "definitions";

/// The schema as `rmatrix schema` prints it: pretty JSON and a final newline.
pub fn schema_text() -> String {
    let text =
        serde_json::to_string_pretty(&matrix_schema()).expect("invariant: a JSON value serialises");
    format!("{text}\n")
}

/// The matrix's schema (JSON Schema draft 7).
pub fn matrix_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut root = generator.into_root_schema_for::<Matrix>().to_value();
    if let Some(defs) = root.get_mut(DEFINITIONS).and_then(Value::as_object_mut) {
        kinds::one_key_of_the_kinds(defs);
    }
    walk(&mut root);
    let node = root
        .as_object_mut()
        .expect("invariant: the root schema is an object");
    node.insert("$id".into(), json!(ID));
    references::matrix_rules(node);
    if let Some(defs) = node.get_mut(DEFINITIONS).and_then(Value::as_object_mut) {
        for (name, definition) in references::definitions() {
            defs.insert(name.into(), definition);
        }
    }
    root
}

/// The keywords whose value is a schema, a list of schemas or a map of them (not
/// `propertyNames`: a key is never a reference, so its words stay as they are).
const ONE: [&str; 3] = ["additionalProperties", "items", "not"];
const MANY: [&str; 3] = ["anyOf", "oneOf", "allOf"];
const MAP: [&str; 2] = ["properties", DEFINITIONS];

/// Adjust `schema` and every schema inside it.
fn walk(schema: &mut Value) {
    let Some(node) = schema.as_object_mut() else {
        return; // `true` or `false`
    };
    for key in ONE {
        if let Some(inner) = node.get_mut(key) {
            walk(inner);
        }
    }
    for key in MANY {
        if let Some(Value::Array(list)) = node.get_mut(key) {
            list.iter_mut().for_each(walk);
        }
    }
    for key in MAP {
        if let Some(Value::Object(map)) = node.get_mut(key) {
            map.values_mut().for_each(walk);
        }
    }
    // A `${name}` string may match several alternatives once each takes one; those of an
    // object (which of its keys it has) see no such string and stay exclusive.
    if types(node) != ["object"] {
        if let Some(alternatives) = node.remove("oneOf") {
            node.insert("anyOf".into(), alternatives);
        }
    }
    bound_integers(node);
    widen_strings(node);
    allow_parameter(node);
    well_formed_text(node);
}

/// The range of each integer format schemars writes, which it bounds below only.
const INTEGER_RANGES: [(&str, i128, i128); 8] = [
    ("uint8", 0, u8::MAX as i128),
    ("uint16", 0, u16::MAX as i128),
    ("uint32", 0, u32::MAX as i128),
    ("uint64", 0, u64::MAX as i128),
    ("uint", 0, u64::MAX as i128),
    ("int32", i32::MIN as i128, i32::MAX as i128),
    ("int64", i64::MIN as i128, i64::MAX as i128),
    ("int", i64::MIN as i128, i64::MAX as i128),
];

/// A number too large for its field is refused by the parser: the schema says so too.
fn bound_integers(node: &mut Map<String, Value>) {
    let format = node.get("format").and_then(Value::as_str);
    let Some((_, min, max)) = INTEGER_RANGES.iter().find(|(f, ..)| Some(*f) == format) else {
        return;
    };
    let number = |n: i128| match u64::try_from(n) {
        Ok(u) => json!(u),
        Err(_) => json!(n as i64),
    };
    node.entry("minimum").or_insert_with(|| number(*min));
    node.entry("maximum").or_insert_with(|| number(*max));
}

/// The value types `node` allows (`type` as a word or a list).
fn types(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `node` narrows which strings it takes.
fn narrows_strings(node: &Map<String, Value>) -> bool {
    ["enum", "const", "pattern", "format"]
        .iter()
        .any(|k| node.contains_key(*k))
}

/// A free string also takes a number or a boolean: the parser reads the scalar's text.
fn widen_strings(node: &mut Map<String, Value>) {
    let types = types(node);
    if !types.contains(&"string") || narrows_strings(node) {
        return;
    }
    let mut widened = vec!["string", "number", "boolean"];
    if types.contains(&"null") {
        widened.push("null");
    }
    node.insert("type".into(), json!(widened));
}

/// The keywords that check a scalar value (moved into the first alternative).
const ASSERTIONS: [&str; 12] = [
    "type",
    "enum",
    "const",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
];

/// A value that not every string fills: `{anyOf: [the value, a parameter reference]}`, its
/// description and default kept outside (where editors read them). A number or a boolean is
/// one reference and nothing else; a word or a pattern may be text around references
/// (`"${secs}s"`, `"lat_${p}_ms"`).
fn allow_parameter(node: &mut Map<String, Value>) {
    let types = types(node);
    let scalar = types
        .iter()
        .any(|t| matches!(*t, "integer" | "number" | "boolean" | "string"));
    let every_string = types.contains(&"string") && !narrows_strings(node);
    let closed_set = node.contains_key("enum") || node.contains_key("const");
    if every_string || !(scalar || closed_set) {
        return;
    }
    let text = closed_set || types.contains(&"string");
    let mut value = Map::new();
    for key in ASSERTIONS {
        if let Some(v) = node.remove(key) {
            value.insert(key.into(), v);
        }
    }
    let name = match text {
        true => references::PARAMETER_TEXT,
        false => references::PARAMETER,
    };
    let parameter = json!({"$ref": format!("#/{DEFINITIONS}/{name}")});
    let either = json!([value, parameter]);
    if !node.contains_key("anyOf") && !node.contains_key("allOf") {
        node.insert("anyOf".into(), either);
        return;
    }
    // Already alternatives beside the type (schemars writes none so far): one more condition.
    let all = node.entry("allOf").or_insert_with(|| json!([]));
    if let Some(list) = all.as_array_mut() {
        list.push(json!({"anyOf": either}));
    }
}

/// Free text may hold references too, each well formed: `${` starts one (`references`).
fn well_formed_text(node: &mut Map<String, Value>) {
    if !types(node).contains(&"string") || narrows_strings(node) {
        return;
    }
    let text = json!({"$ref": format!("#/{DEFINITIONS}/{}", references::TEXT)});
    match node.get_mut("allOf").and_then(Value::as_array_mut) {
        Some(all) => all.push(text),
        None => {
            node.insert("allOf".into(), json!([text]));
        }
    }
}

#[cfg(test)]
mod tests;
