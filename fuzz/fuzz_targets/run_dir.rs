//! A whole run directory as untrusted input: the bytes split at NUL into results.csv,
//! samples.csv and manifest.json, read, checked and rendered in every format
//! (fuzz/fuzz_targets/common.rs says what must hold). Soaked by scripts/fuzz-soak.sh.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let names = ["results.csv", "samples.csv", "manifest.json"];
    let files: Vec<(&str, &[u8])> = names.into_iter().zip(data.split(|b| *b == 0)).collect();
    let dir = common::run_dir(&files);
    common::render_all(&dir);
});
