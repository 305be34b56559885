//! `${name}` references, as far as a JSON Schema can check them. The parser cuts a value into
//! text, literal `$${` and references `${name}` (`input::params`), a name being letters,
//! digits and `_` not starting with a digit, at most 64. The schema says the same of every
//! string: a `${` that starts no such reference is refused; so is any reference in a key, in
//! `params:`, or in a matrix without parameters; a number or a boolean may be one reference
//! and nothing else. What it cannot say is whether the name is one `params:` declares, or
//! whether the value substituted fits the field: draft 7 cannot compare a value with the keys
//! of another object. `rmatrix plan` checks both.

use serde_json::{json, Map, Value};

use super::DEFINITIONS;
use crate::input::patterns::{exactly_one_reference, no_reference, well_formed, with_reference};

/// The definitions this module adds.
pub(super) const PARAMETER: &str = "Parameter";
pub(super) const PARAMETER_TEXT: &str = "ParameterText";
pub(super) const TEXT: &str = "Text";
const NO_REFERENCE: &str = "NoReference";
const KEYS: &str = "Keys";

const NAME_RULE: &str = "`${name}` refers to a parameter: letters, digits and `_`, not \
                         starting with a digit, at most 64; write `$${` for a literal `${`";

/// The definitions every reference rule points to.
pub(super) fn definitions() -> Vec<(&'static str, Value)> {
    let this = |name: &str| json!({"$ref": format!("#/{DEFINITIONS}/{name}")});
    vec![
        (
            PARAMETER,
            json!({
                "description": "A reference to one of the matrix's parameters (`params:`), \
                                substituted before the matrix is read: one `${name}` and \
                                nothing else, whose value is of this field's type.",
                "type": "string",
                "pattern": exactly_one_reference(),
                "patternErrorMessage": format!("one `${{name}}` and nothing else: {NAME_RULE}"),
            }),
        ),
        (
            PARAMETER_TEXT,
            json!({
                "description": "Text that refers to the matrix's parameters (`params:`), \
                                substituted before the matrix is read, e.g. `${tag}` or \
                                `${secs}s`.",
                "type": "string",
                "pattern": with_reference(),
                "patternErrorMessage": NAME_RULE,
            }),
        ),
        (
            TEXT,
            json!({
                "pattern": well_formed(""),
                "patternErrorMessage": NAME_RULE,
            }),
        ),
        (
            NO_REFERENCE,
            json!({
                "description": "No `${name}` here: a key, the `params:` block and a matrix \
                                that declares no parameters refer to none.",
                "pattern": no_reference(),
                "patternErrorMessage": "no `${name}` here (a key, `params:`, or a matrix \
                                        without `params:`); write `$${` for a literal `${`",
                "items": this(NO_REFERENCE),
                "additionalProperties": this(NO_REFERENCE),
            }),
        ),
        (
            KEYS,
            json!({
                "propertyNames": this(NO_REFERENCE),
                "items": this(KEYS),
                "additionalProperties": this(KEYS),
            }),
        ),
    ]
}

/// The rules on the whole matrix: no reference in a key anywhere, none in `params:`, and none
/// at all when `params:` declares nothing (absent or empty).
pub(super) fn matrix_rules(root: &mut Map<String, Value>) {
    let this = |name: &str| json!({"$ref": format!("#/{DEFINITIONS}/{name}")});
    let rules = json!([
        this(KEYS),
        {"properties": {"params": this(NO_REFERENCE)}},
        {
            "if": {"properties": {"params": {"maxProperties": 0}}},
            "then": this(NO_REFERENCE)
        }
    ]);
    root.insert("allOf".into(), rules);
}
