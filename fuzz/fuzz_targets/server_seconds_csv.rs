//! A run directory's `server_seconds.csv` as untrusted input: read, checked and rendered in
//! every format, its timeline charts drawn (fuzz/fuzz_targets/common.rs says what must hold).
//! Soaked by scripts/fuzz-soak.sh.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::run_dir(&[("server_seconds.csv", data)]);
    common::render_all(&dir);
});
