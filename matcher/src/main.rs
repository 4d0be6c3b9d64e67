//! The matcher program: reads its options, binds, prints the address it
//! listens on, and serves until interrupted.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use netcode_matcher::{Options, router};

#[tokio::main]
async fn main() -> ExitCode {
    let options = Options::parse();
    match serve(&options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(options: &Options) -> Result<(), String> {
    let matcher = Arc::new(options.load()?);
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{address}");
    let _ = std::io::stdout().flush();
    axum::serve(listener, router(matcher))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| format!("serving: {e}"))
}
