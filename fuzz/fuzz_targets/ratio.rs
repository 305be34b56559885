//! `rmatrix ratio`'s standard input (`A B` per round) as untrusted input: whatever the bytes,
//! it is refused or answered with one line of JSON, never a panic (its `expect` says that
//! every round it parses is positive). Soaked by scripts/fuzz-soak.sh.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(line) = rmatrix::commands::ratio_text(text, "95%") {
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "{line:?}");
        serde_json::from_str::<serde_json::Value>(&line).expect("ratio prints JSON");
    }
});
