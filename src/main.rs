// The command futures nest deeply (dispatch -> run -> a family-generic iteration): their
// layout needs more than the default query depth of 128 in release builds.
#![recursion_limit = "256"]

use clap::Parser;
use rmatrix::commands::exit::End;

fn main() {
    let cli = rmatrix::commands::Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            std::process::exit(End::Failed(rmatrix::ErrorKind::Failed).code());
        }
    };
    let end = match runtime.block_on(rmatrix::commands::dispatch(cli)) {
        Ok(outcome) => End::Ran(outcome),
        Err(err) => {
            eprintln!("error: {}", rmatrix::error_text(&err));
            End::Failed(rmatrix::error_kind(&err))
        }
    };
    std::process::exit(end.code());
}
