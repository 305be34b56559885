//! A run directory's `manifest.json` as untrusted input: read, checked and rendered in every format
//! (fuzz/fuzz_targets/common.rs says what must hold). Soaked by scripts/fuzz-soak.sh.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::run_dir(&[("manifest.json", data)]);
    common::render_all(&dir);
});
