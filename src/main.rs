use clap::Parser;

fn main() {
    let cli = rmatrix::cli::Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = match runtime.block_on(rmatrix::commands::dispatch(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", rmatrix::error_text(&err));
            rmatrix::exit_code(&err)
        }
    };
    std::process::exit(code);
}
