//! A stored profile (`profiles/*.folded`, the folded stacks of the fixture's first row) as
//! untrusted input: read, checked and rendered in every format, the HTML report with its flame
//! graph (fuzz/fuzz_targets/common.rs says what must hold). Soaked by scripts/fuzz-soak.sh.
#![no_main]

mod common;

/// The profile file of the fixture's first results.csv row.
const PROFILE: &str = "profiles/mariadb-10.11__default__InnoDB__write__c2__1.folded";

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::run_dir(&[(PROFILE, data)]);
    common::render_all(&dir);
});
