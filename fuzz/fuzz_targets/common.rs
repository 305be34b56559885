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
        if let Some(folder) = dir.join(name).parent() {
            std::fs::create_dir_all(folder).expect("a fuzzed file's folder");
        }
        std::fs::write(dir.join(name), bytes).expect("a fuzzed file");
    }
    dir
}

/// Render the run in every format; check what each says.
pub fn render_all(dir: &Path) {
    let formats = [
        Format::Md,
        Format::Csv,
        Format::Html,
        Format::Json,
        Format::Openmetrics,
        Format::Bmf,
    ];
    for format in formats {
        let Ok(text) = rmatrix::commands::report_text(dir, None, format) else {
            continue;
        };
        match format {
            Format::Openmetrics => openmetrics_lines(&text),
            Format::Bmf => {
                serde_json::from_str::<serde_json::Value>(&text).expect("BMF is JSON");
            }
            _ => {}
        }
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

/// Every line of OpenMetrics text is a `#` line or one sample, `name{label="value",...} number`,
/// its label values escaped (a run's text cannot open a line, a label or a sample of its own),
/// and the text ends with `# EOF`.
fn openmetrics_lines(text: &str) {
    assert!(
        text.ends_with("# EOF\n"),
        "OpenMetrics without # EOF: {text:?}"
    );
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        let name = &line[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "OpenMetrics sample name {name:?} in {line:?}"
        );
        let mut rest = &line[name_end..];
        if let Some(labels) = rest.strip_prefix('{') {
            rest = after_labels(labels).unwrap_or_else(|| panic!("OpenMetrics labels: {line:?}"));
        }
        let value = rest
            .strip_prefix(' ')
            .unwrap_or_else(|| panic!("no value: {line:?}"));
        let number = value.split(' ').next().unwrap_or_default();
        assert!(
            number.parse::<f64>().is_ok() || matches!(number, "NaN" | "+Inf" | "-Inf"),
            "OpenMetrics value {number:?} in {line:?}"
        );
    }
}

/// What follows `label="value",...}`, or None when a label is not of that form.
fn after_labels(mut s: &str) -> Option<&str> {
    loop {
        if let Some(rest) = s.strip_prefix('}') {
            return Some(rest);
        }
        let eq = s.find('=')?;
        let key = &s[..eq];
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let mut chars = s[eq + 1..].strip_prefix('"')?.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => match chars.next()? {
                    (_, '\\' | '"' | 'n') => {}
                    _ => return None,
                },
                (i, '"') => break i,
                _ => {}
            }
        };
        s = &s[eq + 2 + end + 1..];
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

fn invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
