//! The matrix schema in a real validator, as an editor's YAML language server holds a matrix
//! to it: Debian's python3-jsonschema on the YAML python3-yaml reads (tests/ref/
//! validate_matrices.py, one process for every file). Every shipped matrix validates. Of the
//! matrix cases of tests/bad/ (those `plan` reads as they are), the schema refuses those whose
//! fault lies in one value or one object (a bound, a word, a name's shape, a `${` that starts
//! no reference); the rest are printed as beyond it: a name that must resolve elsewhere in the
//! matrix or on the machine, a combination of fields, the whole matrix's size, or no YAML.

use std::path::{Path, PathBuf};

use crate::bad_inputs::plan_matrices;
use crate::common::python;

/// Cases the schema is meant to refuse, one or two of each kind of rule it states.
const EXPECTED: [&str; 24] = [
    "022-workloads-empty.yaml",
    "023-server-image-and-build.yaml",
    "034-dup-engine-value.yaml",
    "038-unknown-workload-driver.yaml",
    "039-unknown-slap-field.yaml",
    "049-unknown-metric.yaml",
    "051-unknown-exclude-dimension.yaml",
    "058-type-concurrency-zero.yaml",
    "073-duration-zero.yaml",
    "078-duration-too-long.yaml",
    "081-start-timeout-unitless.yaml",
    "086-iterations-zero.yaml",
    "092-confidence-150.yaml",
    "101-inject-sql-engine.yaml",
    "113-name-with-space.yaml",
    "188-rate-too-high.yaml",
    "246-slap-int-cols-huge.yaml",
    "270-description-right-to-left.yaml",
    "399-source-unknown-recipe.yaml",
    "404-params-default-wrong-type.yaml",
    "408-params-reference-in-key.yaml",
    "416-params-unclosed-reference.yaml",
    "445-profile-cpu-range.yaml",
    "457-pgbench-builtin-and-script.yaml",
];

/// The fewest cases the schema refuses: fewer means a rule was lost.
const AT_LEAST: usize = 170;

/// What the validator said of one file.
struct Verdict {
    file: PathBuf,
    /// Why no schema sees it (not one YAML document), if so.
    not_yaml: Option<String>,
    errors: Vec<String>,
}

/// Every file through the validator at once, in order.
fn validate(files: &[PathBuf]) -> Vec<Verdict> {
    let schema = root().join("matrices/matrix.schema.json");
    let args = std::iter::once(schema.as_path()).chain(files.iter().map(PathBuf::as_path));
    let out = python::reference("validate_matrices.py", args, &[]);
    let verdicts: Vec<Verdict> = out
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            Verdict {
                file: PathBuf::from(v["file"].as_str().unwrap()),
                not_yaml: v["yaml"].as_str().map(str::to_string),
                errors: (v["errors"].as_array().unwrap().iter())
                    .map(|e| e.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect();
    assert_eq!(verdicts.len(), files.len(), "{out}");
    verdicts
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn name(v: &Verdict) -> String {
    v.file.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_real_validator_takes_the_shipped_matrices_and_refuses_the_bad_ones() {
    let mut shipped: Vec<PathBuf> = std::fs::read_dir(root().join("matrices"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    shipped.sort();
    assert!(shipped.len() >= 10, "{shipped:?}");
    let bad = plan_matrices();
    assert!(bad.len() >= 250, "{} matrix cases in tests/bad", bad.len());
    let verdicts = validate(&[shipped.clone(), bad].concat());
    let (shipped, bad) = verdicts.split_at(shipped.len());
    for v in shipped {
        assert!(
            v.not_yaml.is_none() && v.errors.is_empty(),
            "{}: {:?} {:?}",
            v.file.display(),
            v.not_yaml,
            v.errors
        );
    }

    let caught: Vec<&Verdict> = bad.iter().filter(|v| !v.errors.is_empty()).collect();
    let not_yaml: Vec<String> = (bad.iter().filter(|v| v.not_yaml.is_some()))
        .map(name)
        .collect();
    let beyond: Vec<String> = (bad.iter())
        .filter(|v| v.not_yaml.is_none() && v.errors.is_empty())
        .map(name)
        .collect();
    // `cargo test --test it schema_validator -- --nocapture` shows the record.
    println!("refused by the schema, {} of {}:", caught.len(), bad.len());
    for v in &caught {
        println!("  {}: {}", name(v), v.errors[0]);
    }
    println!(
        "no YAML document, {}: {}",
        not_yaml.len(),
        not_yaml.join(" ")
    );
    println!("beyond the schema, {}: {}", beyond.len(), beyond.join(" "));

    for expected in EXPECTED {
        let v = bad.iter().find(|v| name(v) == expected);
        let v = v.unwrap_or_else(|| panic!("{expected} is no matrix case of tests/bad"));
        assert!(!v.errors.is_empty(), "{expected}: the schema takes it");
    }
    assert!(caught.len() >= AT_LEAST, "{} refused", caught.len());
    // A wrong workload kind is told with the kinds there are, not as another kind's missing key.
    let kind = caught.iter().find(|v| name(v) == EXPECTED[3]).unwrap();
    assert!(
        kind.errors
            .iter()
            .any(|e| e.contains("'slapp' is not one of ['slap', 'oltp'")),
        "{:?}",
        kind.errors
    );
}
