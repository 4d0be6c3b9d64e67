//! The matcher program: installs its logger (stderr; `RUST_LOG` sets the
//! filter, `info` by default), reads its options, binds, prints the
//! addresses it listens on, and serves until Ctrl-C or SIGTERM.

use std::process::ExitCode;

use clap::Parser;
use netcode_matcher::{Options, run};

#[tokio::main]
async fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let options = Options::parse();
    match run(&options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
