use super::*;

const DECL: &str = "params:\n  rev: {type: string, default: HEAD, description: \"the commit\"}\n  \
                    iters: {type: int, default: 3}\n  f: {type: float, default: 2.5}\n  \
                    fast: {type: bool}\n";

fn decl(text: &str) -> Result<Declared, ParamError> {
    declared(text, &SpanIndex::build(text))
}

fn no_env(_: &str) -> Result<Option<String>, ()> {
    Ok(None)
}

fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// `body` after `DECL`, substituted with `fast=true` and the defaults (the part after `DECL`).
fn sub(body: &str) -> Result<String, ParamError> {
    let text = format!("{DECL}{body}");
    let d = decl(&text).unwrap();
    let v = values(&d, &given(&[("fast", "true")]), &no_env).unwrap();
    substitute(&text, &d, &v).map(|t| t[DECL.len()..].to_string())
}

fn message(e: ParamError) -> String {
    match e {
        ParamError::At(_, m) | ParamError::Value(m) => m,
        ParamError::Elsewhere => "elsewhere".into(),
    }
}

#[test]
fn declarations_are_read_in_order_with_their_types() {
    let d = decl(&format!(
        "{DECL}servers: {{a: {{image: x}}}}\nk: ${{rev}}\n"
    ))
    .unwrap();
    assert_eq!(d.keys().collect::<Vec<_>>(), ["rev", "iters", "f", "fast"]);
    assert_eq!(d["iters"].ty, ParamType::Int);
    assert_eq!(d["rev"].default.as_deref(), Some("HEAD"));
    assert_eq!(d["fast"].default, None);
    // No `params:`: none declared.
    assert!(decl("servers: {}\n").unwrap().is_empty());
    // What is skipped may hold what only a typed field takes (a NaN where a float goes).
    assert_eq!(
        decl("params: {a: {}}\nx: [.nan, -.inf]\n").unwrap().len(),
        1
    );
}

#[test]
fn bad_declarations_are_refused_where_they_are() {
    let at = |text: &str| match decl(text).unwrap_err() {
        ParamError::At(pos, m) => (pos.line, pos.col, m),
        other => panic!("{other:?}"),
    };
    let (line, col, m) = at("params:\n  n: {type: int, default: x3}\n");
    assert_eq!((line, col), (2, 27));
    assert!(
        m.starts_with("the default of parameter `n` is an int"),
        "{m}"
    );
    let (line, col, m) = at("params:\n  9a: {}\n");
    assert_eq!((line, col), (2, 3));
    assert!(m.starts_with("parameter name `9a` must be"), "{m}");
    assert!(at("params:\n  a-b: {}\n").2.contains("`a-b`"));
    assert!(at(&format!("params:\n  {}: {{}}\n", "a".repeat(65)))
        .2
        .contains("at most 64"));
    let (_, _, m) = at("params:\n  a: {typ: int}\n");
    assert!(m.contains("unknown field `typ`"), "{m}");
    let (_, _, m) = at("params:\n  a: {type: integer}\n");
    assert!(
        m.contains("unknown value `integer`") && m.contains("`bool`"),
        "{m}"
    );
    let (line, _, m) = at("params:\n  a: {default: \"x${b}\"}\n  b: {}\n");
    assert_eq!(line, 2);
    assert!(m.starts_with("`params:` cannot hold `${`"), "{m}");
    let (_, _, m) = at("params:\n  a: {description: \"a\\u202eb\"}\n");
    assert!(m.contains("invisible"), "{m}");
    let (_, _, m) = at("params:\n  a: {type: bool, default: yes}\n");
    assert!(m.contains("is a bool: true or false, not `yes`"), "{m}");
    let (_, _, m) = at("params: [a]\n");
    assert!(m.contains("`params`"), "{m}");
    // A problem outside `params:` is the matrix's own reading's to report.
    assert_eq!(decl("[1, 2]\n").unwrap_err(), ParamError::Elsewhere);
    assert_eq!(decl("a: 1\na: 2\n").unwrap_err(), ParamError::Elsewhere);
}

#[test]
fn values_come_from_set_then_the_environment_then_the_default() {
    let d = decl(DECL).unwrap();
    let env = |var: &str| match var {
        "RMATRIX_PARAM_rev" => Ok(Some("from-env".to_string())),
        "RMATRIX_PARAM_fast" => Ok(Some("false".to_string())),
        _ => Ok(None),
    };
    let v = values(&d, &given(&[("iters", "007")]), &env).unwrap();
    let got: Vec<(&str, &str)> = v.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        [
            ("rev", "from-env"),
            ("iters", "7"),
            ("f", "2.5"),
            ("fast", "false")
        ]
    );
    let v = values(&d, &given(&[("rev", "abc"), ("fast", "true")]), &env).unwrap();
    assert_eq!((v["rev"].as_str(), v["fast"].as_str()), ("abc", "true"));
    // The environment's name is the name as declared, case and all.
    let upper = |var: &str| Ok((var == "RMATRIX_PARAM_FAST").then(|| "true".to_string()));
    let m = message(values(&d, &[], &upper).unwrap_err());
    assert_eq!(
        m,
        "parameter `fast` has no value and no default: give it with `--set fast=VALUE` or the \
         environment variable RMATRIX_PARAM_fast"
    );
    let m = message(values(&d, &[], &|_| Err(())).unwrap_err());
    assert_eq!(m, "RMATRIX_PARAM_rev is not UTF-8 text");
}

#[test]
fn wrong_values_name_their_source_and_type() {
    let d = decl(DECL).unwrap();
    let refused = |pairs: &[(&str, &str)]| {
        let mut all = given(pairs);
        if all.iter().all(|(n, _)| n != "fast") {
            all.push(("fast".into(), "true".into()));
        }
        message(values(&d, &all, &no_env).unwrap_err())
    };
    assert_eq!(
        refused(&[("nope", "1")]),
        "--set nope: the matrix declares no parameter `nope`; declared: rev, iters, f, fast"
    );
    assert_eq!(
        refused(&[("rev", "a"), ("rev", "b")]),
        "--set rev is given twice: give each parameter once"
    );
    assert!(refused(&[("iters", "3.5")]).starts_with("--set iters: parameter `iters` is an int"));
    for bad in ["", "x", "0x10", "1_0", "+3", "99999999999999999999", " 3"] {
        assert!(refused(&[("iters", bad)]).contains("is an int"), "{bad:?}");
    }
    for bad in ["inf", "NaN", "1e999", "1,5", "-+1", ".", ""] {
        assert!(refused(&[("f", bad)]).contains("is a float"), "{bad:?}");
    }
    for bad in ["True", "yes", "1", ""] {
        assert!(refused(&[("fast", bad)]).contains("is a bool"), "{bad:?}");
    }
    for bad in [
        "a\nb",
        "a\rb",
        "\u{1b}[31m",
        "a\u{202e}b",
        "a\u{200b}",
        "tab\there",
    ] {
        let m = refused(&[("rev", bad)]);
        assert!(m.starts_with("--set rev: parameter `rev` is text"), "{m}");
        assert!(!m.contains(['\n', '\r', '\u{1b}', '\u{202e}']), "{m:?}");
    }
    let m = refused(&[("rev", &"x".repeat(MAX_VALUE_BYTES + 1))]);
    assert!(m.contains("at most 1024 bytes"), "{m}");
    assert!(values(
        &d,
        &given(&[("rev", &"x".repeat(1024)), ("fast", "true")]),
        &no_env
    )
    .is_ok());
    let none = decl("servers: {}\n").unwrap();
    let m = message(values(&none, &given(&[("a", "1")]), &no_env).unwrap_err());
    assert!(
        m.ends_with("the matrix declares no parameters (`params:`)"),
        "{m}"
    );
    assert_eq!(split_set("a=b=c"), Some(("a".into(), "b=c".into())));
    assert_eq!(split_set("a"), None);
}

#[test]
fn references_become_quoted_scalars_or_plain_literals() {
    assert_eq!(sub("name: run-${iters}\n").unwrap(), "name: \"run-3\"\n");
    assert_eq!(sub("iterations: ${iters}\n").unwrap(), "iterations: 3\n");
    assert_eq!(sub("c: [\"${iters}\", 8]\n").unwrap(), "c: [3, 8]\n");
    assert_eq!(sub("x: '${f}'\ny: ${fast}\n").unwrap(), "x: 2.5\ny: true\n");
    assert_eq!(sub("r: ${rev}\n").unwrap(), "r: \"HEAD\"\n");
    // Each style's own escapes stay what they were.
    assert_eq!(sub("s: 'it''s ${rev}'\n").unwrap(), "s: \"it's HEAD\"\n");
    assert_eq!(
        sub("d: \"\\x41\\t\\\"${rev}\\\\\"\n").unwrap(),
        "d: \"\\x41\\t\\\"HEAD\\\\\"\n"
    );
    assert_eq!(
        sub("p: a \"b\" \\c ${rev}\n").unwrap(),
        "p: \"a \\\"b\\\" \\\\c HEAD\"\n"
    );
    // `$${` is a literal `${`, written so that it is never read as a reference again.
    assert_eq!(
        sub("cmd: echo $${HOME} ${rev} $$ $x\n").unwrap(),
        "cmd: \"echo \\x24{HOME} HEAD $$ $x\"\n"
    );
    // An anchor, a tag and a comment around the scalar stay; an alias reads the new value.
    assert_eq!(
        sub("a: &x ${rev} # c\nb: *x\nt: !!str ${iters}\n").unwrap(),
        "a: &x \"HEAD\" # c\nb: *x\nt: !!str 3\n"
    );
    // A text without `${` is left as it is, byte for byte.
    assert_eq!(
        sub("k: '$' # ${rev} in a comment\n").unwrap(),
        "k: '$' # ${rev} in a comment\n"
    );
}

#[test]
fn bad_references_are_refused_at_their_scalar() {
    let at = |body: &str| match sub(body).unwrap_err() {
        ParamError::At(pos, m) => (pos.line - DECL.lines().count(), pos.col, m),
        other => panic!("{other:?}"),
    };
    let (line, col, m) = at("a: 1\nb: [x, \"y ${nope}\"]\n");
    assert_eq!((line, col), (2, 8));
    assert_eq!(
        m,
        "`${nope}` names no declared parameter; declared: rev, iters, f, fast"
    );
    let (_, _, m) = at("b: x ${rev\n");
    assert!(
        m.starts_with("`${` is not closed by `}`") && m.contains("declared: rev"),
        "{m}"
    );
    let (_, _, m) = at("b: x ${a b}\n");
    assert!(
        m.starts_with("`${a b}` does not name a parameter") && m.contains("declared: rev"),
        "{m}"
    );
    let (_, _, m) = at("b: ${}\n");
    assert!(m.contains("`${}` does not name"), "{m}");
    let (line, col, m) = at("servers:\n  ${rev}: {image: x}\n");
    assert_eq!((line, col), (2, 3));
    assert!(m.starts_with("a key cannot hold `${`"), "{m}");
    assert!(at("m: {\"${rev}\": 1}\n")
        .2
        .starts_with("a key cannot hold"));
    assert!(at("s: |\n  x ${rev}\n").2.starts_with("a block scalar"));
    assert!(at("s: >-\n  x $${rev}\n").2.starts_with("a block scalar"));
    assert!(at("s: a\n  ${rev}\n")
        .2
        .starts_with("a value written over several lines"));
    assert!(at("s: \"a\n  ${rev}\"\n")
        .2
        .starts_with("a value written over several lines"));
    // Inside `params:` nothing is substituted (the declarations' check says so first).
    let text = "params:\n  a: {description: \"${a}\"}\n";
    let d: Declared = IndexMap::from([("a".to_string(), ParamSpec::default())]);
    let v = IndexMap::from([("a".to_string(), "x".to_string())]);
    let m = message(substitute(text, &d, &v).unwrap_err());
    assert!(m.starts_with("`params:` cannot hold `${`"), "{m}");
}

#[test]
fn no_value_changes_the_structure_of_the_text() {
    let text = "params:\n  s: {}\nk: ${s}\nl: [\"${s}\", b]\nm: 'a ${s}'\nn:\n  - ${s}\n  - \
                \"q\\t${s}\"\nlast: 1\n";
    let hostile = [
        "x: y",
        "]",
        "[",
        "\"",
        "'",
        "# c",
        "a #b",
        "*alias",
        "&a",
        "{",
        "}",
        "!!tag",
        "!x",
        "- item",
        "-",
        "? k",
        "|",
        ">",
        "%YAML 1.2",
        "@x",
        "`x`",
        "a, b",
        "\\",
        "\\n",
        "${s}",
        "$${",
        "$",
        " lead",
        "trail ",
        "",
        "---",
        "...",
        "~",
        "null",
        "true",
        "3",
        "é ü 雪",
    ];
    for v in hostile {
        let d = decl(text).unwrap();
        let vals = values(&d, &given(&[("s", v)]), &no_env).unwrap();
        let out = substitute(text, &d, &vals).unwrap();
        assert_eq!(out.lines().count(), text.lines().count(), "{v:?}: {out}");
        let doc: serde_json::Value =
            crate::input::yaml::from_str(&out).unwrap_or_else(|e| panic!("{v:?}: {e}\n{out}"));
        let want = serde_json::json!({
            "params": {"s": {}},
            "k": v,
            "l": [v, "b"],
            "m": format!("a {v}"),
            "n": [v, format!("q\t{v}")],
            "last": 1,
        });
        assert_eq!(doc, want, "{v:?}:\n{out}");
        assert!(!out[text.find("k:").unwrap()..].contains("${"), "{out}");
        // Substituting the result again changes nothing.
        let again = substitute(&out, &decl(&out).unwrap(), &vals).unwrap();
        assert_eq!(again, out, "{v:?}");
    }
}

#[test]
fn lines_keep_their_numbers() {
    let body = "a: ${rev}\nb: [\"${iters}\", \"x${f}\"]\nc:\n  d: 'e ${fast}'\nf: end\n";
    let out = sub(body).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), body.lines().count());
    assert_eq!(lines[4], "f: end");
    assert_eq!(lines[3], "  d: \"e true\"");
}

#[test]
fn an_unquoted_reference_in_a_flow_collection_is_recognised() {
    let text = "k: [${a}, 2]\n";
    let syntax = SpanIndex::build(text).syntax.expect("a syntax error");
    assert!(unquoted_reference(text, syntax.pos));
    let text = "k: [a, b\n";
    let syntax = SpanIndex::build(text).syntax.expect("a syntax error");
    assert!(!unquoted_reference(text, syntax.pos));
}

#[test]
fn an_expansion_past_the_cap_is_refused_at_the_scalar_that_passes_it() {
    let text = |refs: usize, lines: usize| {
        let one = |i| format!("k{i}: \"{}\"\n", "${v}".repeat(refs));
        let body: String = (0..lines).map(one).collect();
        format!("params: {{v: {{default: {}}}}}\n{body}", "x".repeat(1000))
    };
    let run = |t: &str| {
        let d = decl(t).unwrap();
        let v = values(&d, &[], &no_env).unwrap();
        substitute(t, &d, &v)
    };
    // 1,000 references of 1,000 bytes: about 1 MB, within the cap.
    assert!(run(&text(100, 10)).is_ok());
    // Many scalars, each small: refused at the one that passes the cap.
    match run(&text(100, 20)).unwrap_err() {
        ParamError::At(pos, m) => {
            assert_eq!(pos.line, 12, "{m}");
            assert!(m.contains("larger than 1048576 bytes"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // One scalar of 250,000 references (250 MB) is refused without being built whole.
    match run(&text(250_000, 1)).unwrap_err() {
        ParamError::At(pos, _) => assert_eq!(pos.line, 2),
        other => panic!("{other:?}"),
    }
}
