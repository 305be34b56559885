//! The command line: its parser (`cli`), one module per command with its clap options, the
//! run of the command parsed (`dispatch`), and how it ends as an exit code (`exit`).

mod ab;
mod bisect;
mod clean;
mod cli;
mod compare;
mod completions;
mod dispatch;
pub mod exit;
mod generate;
mod history;
mod internal;
mod man;
pub(crate) mod options;
mod plan;
mod ratio;
mod report;
mod run;
mod schema;
mod stdio;
mod store;

pub use cli::Cli;
pub use dispatch::dispatch;
// What the fuzz targets render through.
pub use plan::plan_text_assumed;
pub use ratio::ratio_text;
pub use report::report_text;
