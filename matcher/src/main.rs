//! The matcher program: reads its options, binds, prints the addresses it
//! listens on, and serves until Ctrl-C or SIGTERM.

use std::process::ExitCode;

use clap::Parser;
use netcode_matcher::{Options, run};

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    match run(&options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
