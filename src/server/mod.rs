//! Provisioning: Docker through bollard, config rendering, readiness and verification.

pub mod docker;
pub mod mycnf;
pub mod mysql;
pub mod verify;
