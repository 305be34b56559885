//! The schema against the parser: the shipped file is the generated one, every shipped matrix
//! and every matrix the parser reads validates, and the schema refuses what the parser refuses
//! for its shape (tests/bad). What only the loader's later checks refuse (names that resolve
//! to nothing, limits, combinations) is beyond a schema, and counted as such.

use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_saphyr::Error;

use super::*;

const REGENERATE: &str = "cargo run --release -- schema > matrices/matrix.schema.json";

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&matrix_schema()).expect("the schema compiles")
}

/// The YAML text as the JSON an editor's language server checks (None: not one document of
/// YAML, which no schema sees).
fn as_json(text: &str) -> Option<Value> {
    crate::input::yaml::from_str::<Value>(text).ok()
}

/// The schema's complaints about `text`, one line each (empty: valid).
fn complaints(v: &jsonschema::Validator, text: &str) -> Vec<String> {
    let json = as_json(text).expect("YAML");
    v.iter_errors(&json)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn the_shipped_schema_is_the_generated_one() {
    let shipped = std::fs::read_to_string(repo(SHIPPED)).unwrap_or_default();
    assert!(
        shipped == schema_text(),
        "{SHIPPED} differs from what `rmatrix schema` prints: regenerate it with `{REGENERATE}`"
    );
}

fn shipped_matrices() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo("matrices"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_matrix_names_the_schema_and_validates() {
    let v = validator();
    let files = shipped_matrices();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("# yaml-language-server: $schema=./matrix.schema.json"),
            "{}",
            file.display()
        );
        crate::matrix::load_str(&text, &file).unwrap();
        assert_eq!(
            complaints(&v, &text),
            Vec::<String>::new(),
            "{}",
            file.display()
        );
    }
}

/// A matrix around `workloads` (YAML lines under `workloads:`) and `extra` top-level lines.
fn matrix(servers: &str, workloads: &str, extra: &str) -> String {
    format!("servers:\n{servers}\nworkloads:\n{workloads}\nlength: 1000\n{extra}\n")
}

const MARIADB: &str = "  db: {image: \"mariadb:11.4\"}";
const REDIS: &str = "  r: {image: \"redis:7.0\"}";
const POSTGRES: &str = "  pg: {image: \"postgres:16\"}";

/// Matrices the parser accepts: each workload kind, and the other shapes of a value.
fn valid_variants() -> Vec<(&'static str, String)> {
    vec![
        ("slap", matrix(MARIADB, "  w: {slap: {load_type: mixed, commit: 10}}", "engines: [InnoDB]")),
        ("oltp", matrix(MARIADB, "  o: {oltp: {test: oltp_read_only, tables: 2, rand_type: zipfian}}", "")),
        ("sysbench", matrix(MARIADB, "  s: {sysbench: {test: oltp_point_select, options: {tables: 2, range_selects: off}}}", "")),
        ("redis", matrix(REDIS, "  g: {redis: {test: mixed, ratio: \"1:10\", pipeline: 4}}", "")),
        ("redis_benchmark", matrix(REDIS, "  b: {redis_benchmark: {test: lrange_100, threads: 2}}", "")),
        ("sqlbench", format!("servers:\n{MARIADB}\nengines: [InnoDB]\nworkloads:\n  q: {{sqlbench: {{groups: [select, insert], small_test: true}}}}\n")),
        ("pgbench", matrix(POSTGRES, "  p: {pgbench: {builtin: select-only, protocol: prepared, scale: 2}}", "")),
        (
            "every top-level block",
            matrix(
                MARIADB,
                "  w: {slap: {}}\n  k: {slap: {load_type: key}}",
                "name: all\ndescription: every block\nengines: [InnoDB, MyISAM]\n\
                 configs:\n  base: {}\n  tuned:\n    mycnf: {innodb_flush_log_at_trx_commit: 2, skip_log_bin: ~}\n    allocator: jemalloc\n    args: [--thread-handling=pool-of-threads]\n    env: {TZ: UTC}\n\
                 concurrency: {from: 1, factor: 2, to: 8}\niterations: 3\nwarmup: 5s\n\
                 exclude: [{engine: MyISAM, workload: [k]}]\n\
                 report: {metric: lat_p99_ms, rows: [workload, concurrency], columns: [config], baseline: {config: base}, apdex_t: {w: 2ms, k: 1ms}, confidence: 90, drift: true}\n\
                 repeat: {order: shuffled, seed: 7, cooldown: 1s, until_cv: 3, max_iterations: 6}\n\
                 network: bridge\nstart_timeout: 2m\nstall_timeout: 30s",
            ),
        ),
        (
            "open loop",
            matrix(
                REDIS,
                "  g: {redis: {test: get}}",
                "load: {rate: [1000, 2000], arrivals: even, shape: {wave: {amplitude_pct: 20, period: 10s}}}",
            ),
        ),
        (
            "parameters",
            matrix(
                "  db: {image: \"mariadb:${tag}\"}",
                "  w: {slap: {load_type: write, number_int_cols: \"${cols}\"}}",
                "engines: [InnoDB]\nparams:\n  tag: {default: \"11.4\"}\n  cols: {type: int, default: 4}\n  iters: {type: int, default: 2}\n  order: {default: interleaved}\n\
                 iterations: ${iters}\nrepeat: {order: \"${order}\"}\nconcurrency: [1, \"${iters}\"]",
            ),
        ),
        ("a number for a name", matrix("  db: {image: \"mariadb:11\", cpuset: 1}", "  w: {slap: {}}", "name: 2026\nengines: [InnoDB]")),
    ]
}

#[test]
fn the_schema_accepts_what_the_parser_reads() {
    let v = validator();
    for (what, text) in valid_variants() {
        if let Err(e) = crate::matrix::load_str(&text, Path::new("variant.yaml")) {
            panic!("{what}: the parser refuses it: {e}\n{text}");
        }
        assert_eq!(
            complaints(&v, &text),
            Vec::<String>::new(),
            "{what}:\n{text}"
        );
    }
}

#[test]
fn the_schema_refuses_a_wrong_shape() {
    let v = validator();
    let cases = [
        ("an unknown key", "  w: {slap: {load_typ: write}}", ""),
        ("an unknown kind", "  w: {slapp: {}}", ""),
        ("two kinds", "  w: {slap: {}, oltp: {}}", ""),
        ("an unknown word", "  w: {slap: {load_type: writes}}", ""),
        ("text for a number", "  w: {slap: {commit: often}}", ""),
        ("a list for a number", "  w: {slap: {}}", "iterations: [3]"),
        (
            "a duration without a unit",
            "  w: {slap: {}}",
            "warmup: 10 secs",
        ),
        (
            "a ratio that is not one",
            "  w: {redis: {test: get, ratio: lots}}",
            "",
        ),
        (
            "an unknown top-level key",
            "  w: {slap: {}}",
            "itrations: 3",
        ),
        (
            "a reference that is not one",
            "  w: {slap: {}}",
            "iterations: \"$iters\"",
        ),
    ];
    for (what, workloads, extra) in cases {
        let text = matrix(MARIADB, workloads, extra);
        assert!(
            crate::matrix::load_str(&text, Path::new("x.yaml")).is_err(),
            "{what}"
        );
        assert!(
            !complaints(&v, &text).is_empty(),
            "{what}: the schema accepts\n{text}"
        );
    }
    let no_servers = "workloads:\n  w: {slap: {}}\nlength: 10\n";
    assert!(
        !complaints(&v, no_servers).is_empty(),
        "a matrix needs `servers`"
    );
}

/// Why the parser refuses a case of tests/bad, as far as a schema is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reason {
    /// Not one YAML document (syntax, a duplicate key, an empty file): no schema sees it.
    NotYaml,
    /// It refers to parameters: the parser reads it after substitution, the schema before.
    Parameters,
    /// The wrong shape: an unknown key or word, a wrong type, a missing field.
    Shape,
    /// A value serde's types refuse by its content (`10 secs`, a geometric step of 0).
    Value,
    /// A number written otherwise than in decimal digits (`"3"`, `0x10`).
    Number,
    /// Read fine: only the loader's checks of meaning refuse it.
    Meaning,
}

fn is_shape(e: &Error) -> bool {
    match e {
        Error::AliasError { error, .. } => is_shape(error),
        Error::SerdeUnknownField { .. }
        | Error::SerdeUnknownVariant { .. }
        | Error::SerdeMissingField { .. }
        | Error::SerdeInvalidType { .. }
        | Error::InvalidScalar { .. }
        | Error::InvalidBooleanStrict { .. }
        | Error::NullIntoString { .. }
        | Error::UnexpectedValueForUnitEnumVariant { .. }
        | Error::ExternallyTaggedEnumExpectedScalarOrMapping { .. } => true,
        _ => false,
    }
}

fn reason(text: &str) -> Reason {
    if as_json(text).is_none() {
        return Reason::NotYaml;
    }
    if text.contains("${") {
        return Reason::Parameters;
    }
    match crate::input::yaml::from_str::<Matrix>(text) {
        Err(e) if is_shape(&e) => Reason::Shape,
        Err(_) => Reason::Value,
        Ok(_) => match super::super::load::read_text(text, "case.yaml") {
            Err(_) => Reason::Number,
            Ok(_) => Reason::Meaning,
        },
    }
}

/// The matrix cases of tests/bad (`# args: plan {}`), their header lines left in (comments).
fn bad_matrices() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo("tests/bad")).unwrap() {
        let path = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not UTF-8: a case of the reader's
        };
        let plain = text.lines().any(|l| l == "# args: plan {}")
            && !text
                .lines()
                .any(|l| l.starts_with("# env:") || l.starts_with("# write:"));
        if plain && path.extension().is_some_and(|e| e == "yaml") {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                text,
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn the_schema_and_the_parser_agree_on_tests_bad() {
    let v = validator();
    let mut counts = std::collections::BTreeMap::<Reason, (usize, usize)>::new();
    let mut disagree = Vec::new();
    let mut caught_meaning = Vec::new();
    for (name, text) in bad_matrices() {
        let why = reason(&text);
        let refused = as_json(&text).is_some_and(|j| !v.is_valid(&j));
        let count = counts.entry(why).or_default();
        count.0 += 1;
        count.1 += usize::from(refused);
        // A wrong shape is the schema's to refuse. Of what reads fine and the loader's checks
        // refuse, the schema catches the bounds and words it can state (iterations of 0,
        // an unknown report metric); the valid matrices above hold it to accepting the rest.
        match why {
            Reason::Shape if !refused => disagree.push(format!("{name}: the schema accepts it")),
            Reason::Meaning if refused => caught_meaning.push(name.clone()),
            _ => {}
        }
    }
    // `cargo test --release --lib agree_on_tests_bad -- --nocapture` prints the tally.
    for (why, (cases, refused)) in &counts {
        println!("{why:?}: {cases} cases, {refused} refused by the schema");
    }
    println!("caught by the schema though they read fine: {caught_meaning:?}");
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    for case in ["086-iterations-zero.yaml", "049-unknown-metric.yaml"] {
        assert!(
            caught_meaning.iter().any(|c| c == case),
            "{case}: {caught_meaning:?}"
        );
    }
    assert!(
        counts.get(&Reason::Shape).is_some_and(|c| c.0 >= 20),
        "{counts:?}"
    );
    assert!(
        counts.get(&Reason::Meaning).is_some_and(|c| c.0 >= 50),
        "{counts:?}"
    );
}

/// A comment line above a matrix shifts nothing: errors keep their line and column.
#[test]
fn the_schema_line_keeps_error_positions() {
    let case = std::fs::read_to_string(repo("tests/bad/018-servers-is-a-list.yaml")).unwrap();
    let body: String = case
        .lines()
        .filter(|l| !l.starts_with("# "))
        .map(|l| format!("{l}\n"))
        .collect();
    let with_line = format!("# yaml-language-server: $schema=./matrix.schema.json\n{body}");
    let e = crate::matrix::load_str(&with_line, Path::new("m.yaml")).unwrap_err();
    assert_eq!((e.line, e.col), (2, 10), "{e}");
    let e = crate::matrix::load_str(&body, Path::new("m.yaml")).unwrap_err();
    assert_eq!((e.line, e.col), (1, 10), "{e}");
}

/// The complete matrices in the docs' YAML blocks (those the parser reads, with its
/// parameters' defaults): each validates too.
#[test]
fn the_docs_matrices_validate() {
    let v = validator();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.push(repo("README.md"));
    let mut read = 0;
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for block in text.split("```yaml\n").skip(1) {
            let block = block.split("```").next().unwrap_or_default();
            if crate::matrix::load_str(block, &repo("matrices/doc.yaml")).is_err() {
                continue; // a fragment of a matrix, or one that needs a --set
            }
            read += 1;
            let found = complaints(&v, block);
            assert!(found.is_empty(), "{}: {found:?}\n{block}", doc.display());
        }
    }
    assert!(read >= 2, "{read} matrices read from the docs");
}
