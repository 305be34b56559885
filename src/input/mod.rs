//! Reading untrusted input: the YAML parser with its limits, positions of every node,
//! checks of names and values that reach config files and SQL, and the `Length` type.

pub mod length;
pub mod span;
pub mod untrusted;
pub mod yaml;

pub use length::Length;
