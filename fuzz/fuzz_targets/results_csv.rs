//! A run directory's `results.csv` as untrusted input: read, checked and rendered in every format
//! (fuzz/fuzz_targets/common.rs says what must hold). Soaked by scripts/fuzz-soak.sh.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::run_dir(&[("results.csv", data)]);
    common::render_all(&dir);
});
