//! Reading untrusted input: the YAML parser with its limits, positions of every node,
//! checks of names and values that reach config files and SQL, the `Length` type, the
//! matrix's parameters substituted into its text, and the one size-capped reader of every
//! file.

pub(crate) mod bounds;
pub(crate) mod file;
pub(crate) mod length;
pub(crate) mod numbers;
pub(crate) mod params;
pub(crate) mod patterns;
pub(crate) mod repeats;
pub(crate) mod span;
pub(crate) mod untrusted;
pub mod yaml;

pub use length::Length;
