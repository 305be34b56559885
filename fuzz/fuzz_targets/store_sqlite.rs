//! A results store as untrusted input: the bytes are a SQLite file, read as `store list`,
//! `history` and `plan --learn-from` read one (rmatrix::store::read_sqlite). Whatever the
//! file holds (a view where a table belongs, a value past its cap, a damaged page), it is
//! read or refused, never a panic, a hang or a blow-up. Soaked by scripts/fuzz-soak.sh.
#![no_main]

use std::path::{Path, PathBuf};

/// This process's store file (in memory where /dev/shm is), without the WAL and shared
/// memory files an earlier input left.
fn store_path() -> PathBuf {
    let base = match Path::new("/dev/shm").is_dir() {
        true => PathBuf::from("/dev/shm"),
        false => std::env::temp_dir(),
    };
    let path = base.join(format!("rmatrix-fuzz-store-{}.db", std::process::id()));
    for suffix in ["-wal", "-shm"] {
        let mut side = path.clone().into_os_string();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    path
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = store_path();
    std::fs::write(&path, data).expect("a fuzz store file");
    let _ = rmatrix::store::read_sqlite(&path);
});
