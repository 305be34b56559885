//! What the loader's checks narrow in the matrix's own fields, as the schema says it: the
//! `#[schemars(transform = ...)]` functions of `model` and `pacing`, each adding to the schema
//! of a field's type the bounds, words and patterns its check holds it to, from the check's
//! own constants. (A bound on a plain number stays beside its field: `range(...)`.)

use schemars::Schema;
use serde_json::{json, Value};

use crate::input::bounds::{MAX_FACTOR, MAX_STEP_PCT, MAX_TIMELINE_COUNTERS};
use crate::input::patterns;
use crate::model::Dimension;

/// `keywords` into `schema`, each replacing what was there.
fn add(schema: &mut Schema, keywords: Value) {
    let Value::Object(keywords) = keywords else {
        panic!("invariant: keywords are an object");
    };
    for (key, value) in keywords {
        schema.insert(key, value);
    }
}

/// A text field's pattern, on a field that may also be null (an optional one).
fn optional_text(schema: &mut Schema, mut text: Value) {
    text["type"]
        .as_array_mut()
        .expect("invariant: a text's types are a list")
        .push(json!("null"));
    add(schema, text);
}

/// The dimension names, as `Dimension::parse` reads them.
fn dimension_names() -> Value {
    json!({"enum": Dimension::ALL.map(Dimension::name)})
}

/// `name`: a name, as `untrusted::name` checks it.
pub(crate) fn matrix_name(schema: &mut Schema) {
    optional_text(schema, patterns::name());
}

/// `description`: text without control or invisible characters (`untrusted::description`).
pub(crate) fn description(schema: &mut Schema) {
    optional_text(schema, patterns::description());
}

/// `servers`, `configs`, `workloads`: at least one, each named as `untrusted::name` checks.
pub(crate) fn axis_names(schema: &mut Schema) {
    add(
        schema,
        json!({"minProperties": 1, "propertyNames": patterns::name_key()}),
    );
}

/// `params`: at most `MAX_PARAMS`, each named as a reference writes it.
pub(crate) fn parameter_names(schema: &mut Schema) {
    let pattern = format!("^{}$", patterns::PARAMETER_NAME);
    add(
        schema,
        json!({
            "maxProperties": crate::input::params::MAX_PARAMS,
            "propertyNames": {
                "pattern": pattern,
                "patternErrorMessage": "letters, digits and `_`, not starting with a digit, \
                                        at most 64 characters",
            },
        }),
    );
}

/// `engines`: plain SQL identifiers, each once.
pub(crate) fn engines(schema: &mut Schema) {
    add(
        schema,
        json!({"uniqueItems": true, "items": patterns::sql_identifier()}),
    );
}

/// `exclude`, `include`: rules of at least one dimension each.
pub(crate) fn rules(schema: &mut Schema) {
    if let Some(rule) = schema.get_mut("items").and_then(Value::as_object_mut) {
        rule.insert("minProperties".into(), json!(1));
        rule.insert("propertyNames".into(), dimension_names());
    }
}

/// `report.rows`, `report.columns`: dimensions.
pub(crate) fn dimensions(schema: &mut Schema) {
    let mut names = dimension_names();
    names["type"] = json!("string");
    schema.insert("items".into(), names);
}

/// `report.baseline`: keyed by dimension.
pub(crate) fn baseline(schema: &mut Schema) {
    schema.insert("propertyNames".into(), dimension_names());
}

/// `report.confidence`: a level strictly between 50% and 100%, as a fraction or in percent
/// (`stats::Confidence::parse`).
pub(crate) fn confidence(schema: &mut Schema) {
    let (low, high) = crate::stats::Confidence::BOUNDS;
    let fraction = json!({"exclusiveMinimum": low, "exclusiveMaximum": high});
    let percent = json!({"exclusiveMinimum": low * 100.0, "exclusiveMaximum": high * 100.0});
    schema.insert("anyOf".into(), json!([fraction, percent]));
}

/// `report.timeline_counters`: at most the panels a chart draws, each a counter's name.
pub(crate) fn timeline_counters(schema: &mut Schema) {
    add(
        schema,
        json!({
            "maxItems": MAX_TIMELINE_COUNTERS,
            "items": patterns::counter_name(),
        }),
    );
}

/// A percentage above zero (`repeat.until_cv`, `repeat.until_interval`).
pub(crate) fn above_zero(schema: &mut Schema) {
    schema.insert("exclusiveMinimum".into(), json!(0));
}

/// `load.shape.steps.pct`: at least one step, each above 0 and at most `MAX_STEP_PCT`.
pub(crate) fn step_percentages(schema: &mut Schema) {
    let max = MAX_STEP_PCT;
    add(
        schema,
        json!({
            "minItems": 1,
            "items": {"type": "number", "exclusiveMinimum": 0, "maximum": max},
        }),
    );
}

/// A geometric sweep's `factor`: above 1, at most `MAX_FACTOR`.
pub(crate) fn geometric_factor(schema: &mut Schema) {
    let max = MAX_FACTOR;
    add(schema, json!({"exclusiveMinimum": 1, "maximum": max}));
}
