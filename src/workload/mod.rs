//! Workload definitions: what SQL each kind sends. Pure; the drivers live in `drive`.

pub mod oltp;
pub mod redis;
pub mod slap;
pub mod sysbench;
