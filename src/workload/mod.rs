//! Workload definitions: what SQL each kind sends. Pure; the drivers live in `drive`.

pub mod slap;
