#!/usr/bin/env python3
"""Validate matrix files against the matrix JSON Schema with a real validator, as an editor's
language server would: Debian's python3-jsonschema on the YAML read by python3-yaml.

Run: /usr/bin/python3 tests/ref/validate_matrices.py matrices/matrix.schema.json FILE...
(tests/it/schema_validator.rs does, once for all its files.)

Prints one JSON object per FILE, in order:
  {"file": FILE, "yaml": null, "errors": ["<path>: <message>", ...]}   (no errors: valid)
  {"file": FILE, "yaml": "<why>", "errors": []}                        (no schema sees it)

The YAML is read as YAML 1.2's core schema, as yaml-language-server and rmatrix read it (not
PyYAML's YAML 1.1: `off` stays a word, `010` is ten, a date is text), with a duplicate key
refused as rmatrix refuses it, and a document that aliases expand beyond MAX_NODES refused
before the validator walks it.
"""
import json
import re
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"{e.name} is missing: run scripts/setup.sh (python3-jsonschema, python3-yaml)", file=sys.stderr)
    sys.exit(3)

MAX_NODES = 100_000


class Core12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core's plain scalars and no duplicate keys."""


# Keep the resolvers of merge keys and the rest; replace those whose words YAML 1.2 changed.
_REPLACED = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}
Core12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _rx, _first in [
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
]:
    Core12Loader.add_implicit_resolver("tag:yaml.org,2002:" + _tag, re.compile(_rx), list(_first))


def _int(loader, node):
    text = loader.construct_scalar(node)
    return int(text, 0) if text[:2] in ("0o", "0x") else int(text, 10)


def _bool(loader, node):
    return loader.construct_scalar(node).lower() == "true"


def _mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    out = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, bool):
            key = "true" if key else "false"
        key = "null" if key is None else str(key)  # JSON's keys are text
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=deep)
    return out


Core12Loader.add_constructor("tag:yaml.org,2002:int", _int)
Core12Loader.add_constructor("tag:yaml.org,2002:bool", _bool)
Core12Loader.add_constructor("tag:yaml.org,2002:map", _mapping)


def node_count(value, memo):
    """Nodes of `value` with every alias expanded, counted once per shared object."""
    key = id(value)
    if key in memo:
        return memo[key]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    memo[key] = 1 + sum(node_count(child, memo) for child in children)
    return memo[key]


def read(path):
    """The document as JSON-like values, or (None, why) when no schema would see it."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.load(f, Loader=Core12Loader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError) as e:
        return None, f"not one YAML document: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    if node_count(doc, {}) > MAX_NODES:
        return None, f"more than {MAX_NODES} nodes once its aliases are expanded"
    return doc, None


def where(error):
    return "/" + "/".join(str(p) for p in error.absolute_path)


def main(schema_path, files):
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    for path in files:
        doc, why = read(path)
        errors = [] if why else [
            f"{where(e)}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        ]
        print(json.dumps({"file": path, "yaml": why, "errors": errors}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
