//! Editor and shell support, through the real binary (no Docker): the completion scripts,
//! the man pages and the matrix schema that `rmatrix completions`, `man` and `schema` print.

use std::process::Command;

use crate::common::rmatrix;

/// The visible commands, each of which completion and the man pages must offer.
const COMMANDS: [&str; 13] = [
    "run",
    "plan",
    "report",
    "compare",
    "history",
    "ratio",
    "bisect",
    "ab",
    "clean",
    "store",
    "schema",
    "completions",
    "man",
];

/// What bash offers after `words` (the last one being completed), with the script loaded.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let words_list: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\ncomplete -p rmatrix >&2\nCOMP_WORDS=({})\nCOMP_CWORD={}\n\
         _rmatrix rmatrix '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        words_list.join(" "),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len().saturating_sub(2)],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&program)
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("-F _rmatrix"), "not registered: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_bash_completion_offers_the_commands_and_the_shells() {
    let out = rmatrix(&["completions", "bash"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("rmatrix.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    let offered = bash_completes(&script, &["rmatrix", ""]);
    for command in COMMANDS {
        assert!(
            offered.iter().any(|o| o == command),
            "{command} not in {offered:?}"
        );
    }
    for internal in ["drive-cell", "await-server", "engine-port"] {
        assert!(!offered.iter().any(|o| o == internal), "{internal} offered");
    }
    let shells = bash_completes(&script, &["rmatrix", "completions", ""]);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(
            shells.iter().any(|o| o == shell),
            "{shell} not in {shells:?}"
        );
    }
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = rmatrix(&["completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(
            out.stdout.contains("rmatrix") && out.stdout.contains("compare"),
            "{shell}"
        );
    }
    let out = rmatrix(&["completions", "tcsh"]);
    assert_eq!(out.code, 2, "an unknown shell is a usage error");
}

/// groff's warnings about a man page (`-ww`: all of them), and its text (plain: no bold or
/// underline by overstriking).
fn render(page: &[u8]) -> (String, String) {
    use std::io::Write;
    let mut child = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("groff (scripts/setup.sh installs groff-base)");
    child.stdin.take().unwrap().write_all(page).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (String::from_utf8_lossy(&out.stderr).into_owned(), text)
}

#[test]
fn the_man_pages_render_without_warnings() {
    let out = rmatrix(&["man"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (warnings, text) = render(out.stdout.as_bytes());
    assert_eq!(warnings, "", "groff warns about rmatrix.1");
    let sections = ["NAME", "SYNOPSIS", "DESCRIPTION", "SUBCOMMANDS"];
    let ours = ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"];
    for section in sections.iter().chain(&ours) {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    let out = rmatrix(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let mut expected: Vec<String> = (COMMANDS.iter().chain(&["store-import", "store-list"]))
        .map(|c| format!("rmatrix-{c}.1"))
        .collect();
    expected.push("rmatrix.1".into());
    expected.sort();
    assert_eq!(pages, expected);
    for page in &pages {
        let (warnings, text) = render(&std::fs::read(dir.join(page)).unwrap());
        assert_eq!(warnings, "", "groff warns about {page}");
        assert!(text.contains("SYNOPSIS"), "{page}");
        if page == "rmatrix.1" {
            assert!(ours.iter().all(|s| text.contains(s)), "{text}");
        }
        assert!(
            out.stderr.contains(page.as_str()),
            "{page} not named: {}",
            out.stderr
        );
    }
    let (_, run) = render(&std::fs::read(dir.join("rmatrix-run.1")).unwrap());
    assert!(run.contains("--resume"), "{run}");
}

#[test]
fn the_schema_command_prints_the_shipped_schema() {
    let out = rmatrix(&["schema"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices/matrix.schema.json"),
    )
    .unwrap();
    assert!(
        out.stdout == shipped,
        "regenerate: rmatrix schema > matrices/matrix.schema.json"
    );
    // The name docs/matrix.md gives it, the same from release to release.
    let schema: serde_json::Value = serde_json::from_str(&shipped).unwrap();
    assert_eq!(
        schema["$id"],
        "https://rmatrix.dev/schema/matrix.schema.json"
    );
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
}
