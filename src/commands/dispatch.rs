//! The parsed command run: each to its module, each returning how it ended.

use anyhow::Result;
use clap::CommandFactory;

use super::cli::{Cli, Command};
use super::{ab, bisect, clean, compare, completions, history, internal, man, plan};
use super::{ratio, report, run, schema, store};
use crate::error::Outcome;

/// Run the command of `cli`; how it ended (`exit::End` gives the exit code).
pub async fn dispatch(cli: Cli) -> Result<Outcome> {
    match cli.command {
        Command::Run(a) => run::run(a).await,
        Command::Bisect(a) => bisect::bisect(a).await,
        Command::Ab(a) => ab::ab(a).await,
        Command::DriveCell => internal::drive_cell().await,
        Command::AwaitServer => internal::await_server().await,
        Command::EnginePort => internal::engine_port(),
        Command::Plan(a) => plan::plan(&a),
        Command::Report(a) => report::report(&a),
        Command::Compare(a) => compare::compare(&a),
        Command::History(a) => history::history(&a),
        Command::Ratio(a) => ratio::ratio(&a),
        Command::Clean(a) => clean::clean(&a).await,
        Command::Store(a) => store::store(&a),
        Command::Schema => schema::schema(),
        // The generators are given the parser's definition: they do not import it.
        Command::Completions(a) => completions::completions(&a, Cli::command()),
        Command::Man(a) => man::man(&a, Cli::command()),
    }
}
