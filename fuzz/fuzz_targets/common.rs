//! A run directory whose files come from the fuzzer, rendered as `rmatrix report` renders
//! it: whatever the bytes, reading, checking and every exporter either refuse the run or
//! render it, never panic or hang, and no control or invisible character from the run
//! reaches the output raw (JSON keeps the run's text, as `\uXXXX` escapes).

use std::path::{Path, PathBuf};

use rmatrix::export::Format;

/// The hand-made run of tests/bad/rundirs/good: what a fuzzed file replaces.
const FIXTURE: [(&str, &str); 3] = [
    (
        "results.csv",
        include_str!("../../tests/bad/rundirs/good/results.csv"),
    ),
    (
        "manifest.json",
        include_str!("../../tests/bad/rundirs/good/manifest.json"),
    ),
    (
        "matrix.yaml",
        include_str!("../../tests/bad/rundirs/good/matrix.yaml"),
    ),
];

/// This process's run directory (in memory where /dev/shm is), laid anew from the fixture
/// with `files` written over it.
pub fn run_dir(files: &[(&str, &[u8])]) -> PathBuf {
    let base = match Path::new("/dev/shm").is_dir() {
        true => PathBuf::from("/dev/shm"),
        false => std::env::temp_dir(),
    };
    let dir = base.join(format!("rmatrix-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a fuzz run directory");
    for (name, text) in FIXTURE {
        std::fs::write(dir.join(name), text).expect("a fixture file");
    }
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).expect("a fuzzed file");
    }
    dir
}

/// Render the run in every format; check what each says.
pub fn render_all(dir: &Path) {
    for format in [Format::Md, Format::Csv, Format::Html, Format::Json] {
        let Ok(text) = rmatrix::commands::report_text(dir, None, format) else {
            continue;
        };
        if let Some(c) = text
            .chars()
            .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        {
            panic!("{format:?} carries the control character {c:?}");
        }
        if let Some(c) = text.chars().find(|c| invisible(*c)) {
            panic!("{format:?} carries the invisible character {c:?}");
        }
    }
}

fn invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
