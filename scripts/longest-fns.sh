#!/usr/bin/env bash
# Prints the ten longest non-test functions in src/ (file:line, name, lines from `fn` to its
# closing brace) and fails when any function is longer than 100 lines. Test code is left out:
# `#[cfg(test)]` modules and functions, `#[test]` and `#[tokio::test]` functions.
#
# LONGEST_FNS_EXEMPT="src/run.rs:run ..." (file:name, space-separated) lets the named functions
# through with a warning: for local use while one is being split, never set in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

exec python3 - "${LONGEST_FNS_EXEMPT:-}" <<'EOF'
import pathlib
import re
import sys

MAX_LINES = 100
exempt = set(sys.argv[1].split())


def blank(text):
    """The source with comments, strings and char literals replaced by spaces (lines kept),
    so that only code braces are counted."""
    out, i, n = [], 0, len(text)
    keep = lambda s: "".join(c if c == "\n" else " " for c in s)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
        elif m := re.match(r'b?r(#*)"', text[i:]):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
        elif c == '"' or text.startswith('b"', i):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif m := re.match(r"b?'(\\.[^']*|[^'\\])'", text[i:]):
            j = i + m.end()
        else:
            out.append(c)
            i += 1
            continue
        out.append(keep(text[i:j]))
        i = j
    return "".join(out)


def body_end(code, start):
    """Index of the `}` closing the first `{` after `start` outside parentheses and brackets,
    or None when a `;` comes first (a declaration without a body)."""
    depth = 0
    for j in range(start, len(code)):
        c = code[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return None
        elif c == "{" and depth == 0:
            level = 0
            for k in range(j, len(code)):
                if code[k] == "{":
                    level += 1
                elif code[k] == "}":
                    level -= 1
                    if level == 0:
                        return k
            return None
    return None


TEST_ATTR = re.compile(r"#\[(cfg\(test\)|(\w+::)*test(\(.*?\))?)\]")
ITEM_AFTER = re.compile(
    r"(\s*#\[[^\]]*\])*\s*(pub(\([^)]*\))?\s+)?((async|const|unsafe)\s+)*(fn|mod)\b"
)
FN = re.compile(r"\bfn\s+(\w+)")

found = []
for path in sorted(pathlib.Path("src").rglob("*.rs")):
    code = blank(path.read_text())
    line_of = lambda pos: code.count("\n", 0, pos) + 1
    skipped = []  # test code: (start, end) of each test module or function
    for m in TEST_ATTR.finditer(code):
        item = ITEM_AFTER.match(code, m.end())
        if item:
            end = body_end(code, item.end())
            skipped.append((m.start(), end if end is not None else item.end()))
    for m in FN.finditer(code):
        if any(a <= m.start() <= b for a, b in skipped):
            continue
        end = body_end(code, m.end())
        if end is None:
            continue
        length = line_of(end) - line_of(m.start()) + 1
        found.append((length, f"{path}:{line_of(m.start())}", m.group(1), str(path)))

found.sort(key=lambda f: (-f[0], f[1]))
for length, where, name, _ in found[:10]:
    print(f"{length:5}  {where}  {name}")

bad = 0
for length, where, name, path in found:
    if length <= MAX_LINES:
        break
    if f"{path}:{name}" in exempt:
        print(f"warning: {where} {name} is {length} lines (exempted by LONGEST_FNS_EXEMPT)",
              file=sys.stderr)
        continue
    print(f"{where}: `{name}` is {length} lines, over {MAX_LINES}: split it into named steps",
          file=sys.stderr)
    bad = 1
sys.exit(bad)
EOF
