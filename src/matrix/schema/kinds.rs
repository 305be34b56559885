//! The workload kinds in the schema. schemars writes a workload as "one of these one-key
//! maps", which an editor reports, for a kind it does not know, as the first alternative's
//! missing key ("Missing property slap"). The same rule written as one map of at most one key,
//! whose names are the kinds and whose values are their options, reads as it is meant: an
//! unknown kind is a key not allowed, with the kinds named. Each kind's own bounds and words
//! (`Driver::schema_rules`) go into its options' schema.

use serde_json::{json, Map, Value};

use crate::workloads::{WorkloadSpec, WORKLOAD_KINDS};

const WORKLOAD: &str = "WorkloadSpec";

/// `WorkloadSpec` as one map of one key among the kinds, and each kind's rules in its schema.
pub(super) fn one_key_of_the_kinds(defs: &mut Map<String, Value>) {
    let workload = defs
        .get_mut(WORKLOAD)
        .and_then(Value::as_object_mut)
        .expect("invariant: schemars defines the workload");
    let alternatives = match workload
        .remove("anyOf")
        .or_else(|| workload.remove("oneOf"))
    {
        Some(Value::Array(list)) => list,
        _ => panic!("invariant: schemars writes the kinds as alternatives"),
    };
    let mut properties = Map::new();
    for alternative in alternatives {
        let (kind, options) = one_kind(alternative);
        properties.insert(kind, options);
    }
    let kinds = WORKLOAD_KINDS.join(", ");
    let described = format!(
        "One workload: its kind, one of {kinds}, with the kind's options, e.g. `{{{}: {{}}}}`.",
        WORKLOAD_KINDS[0]
    );
    workload.extend(
        json!({
            "description": described,
            "type": "object",
            "properties": properties,
            "propertyNames": {"enum": WORKLOAD_KINDS},
            "additionalProperties": false,
            "minProperties": 1,
            "maxProperties": 1,
            // yaml-language-server's message for a key that is not a kind, and for none.
            "errorMessage": format!("a workload names one kind: {kinds}"),
        })
        .as_object()
        .expect("invariant: an object")
        .clone(),
    );
    for (kind, rules) in WorkloadSpec::schema_rules() {
        let options = options_of(defs, kind);
        for (at, keywords) in rules {
            apply(options, kind, at, keywords);
        }
    }
}

/// An alternative `{properties: {kind: options}, description}` as the kind and its options.
fn one_kind(alternative: Value) -> (String, Value) {
    let Value::Object(mut alternative) = alternative else {
        panic!("invariant: a kind's alternative is an object");
    };
    let Some(Value::Object(properties)) = alternative.remove("properties") else {
        panic!("invariant: a kind's alternative has its one key");
    };
    let (kind, options) = properties
        .into_iter()
        .next()
        .expect("invariant: a kind's alternative has its one key");
    // Draft 7 reads nothing beside a `$ref`: the description goes beside an `allOf`.
    let mut wrapped = json!({"allOf": [options]});
    if let Some(description) = alternative.remove("description") {
        wrapped["description"] = description;
    }
    (kind, wrapped)
}

/// The definition of `kind`'s options (the `$ref` of its property).
fn options_of<'a>(defs: &'a mut Map<String, Value>, kind: &str) -> &'a mut Map<String, Value> {
    let reference = defs[WORKLOAD]["properties"][kind]["allOf"][0]["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("invariant: workload kind {kind} has a definition"));
    defs.get_mut(&reference)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("invariant: {reference} is defined"))
}

/// Merge `keywords` into the option `at` of `options` (`""`: the options themselves). A
/// size's range on a list is its length.
fn apply(options: &mut Map<String, Value>, kind: &str, at: &str, keywords: Value) {
    let node = match at {
        "" => options,
        _ => options
            .get_mut("properties")
            .and_then(|p| p.get_mut(at))
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("invariant: workload kind {kind} has an option {at}")),
    };
    let list = node.get("type").and_then(Value::as_str) == Some("array");
    let Value::Object(keywords) = keywords else {
        panic!("invariant: the rule of {kind}.{at} is an object of keywords");
    };
    for (key, value) in keywords {
        let key = match (list, key.as_str()) {
            (true, "minimum") => "minItems".to_string(),
            (true, "maximum") => "maxItems".to_string(),
            _ => key,
        };
        merge(node, key, value);
    }
}

/// `value` at `key` of `node`, merged into an object already there.
fn merge(node: &mut Map<String, Value>, key: String, value: Value) {
    match (node.get_mut(&key), value) {
        (Some(Value::Object(old)), Value::Object(new)) => {
            for (k, v) in new {
                merge(old, k, v);
            }
        }
        (_, value) => {
            node.insert(key, value);
        }
    }
}
