//! The durable connect token history under load, timed by wall clock
//! (no criterion): how many records the disk makes durable per second with
//! one sync per token and with group commit, and whether a server with a
//! history file keeps its game loop and its clients through a flood of new
//! tokens (BENCHMARKS.md, "Token history: group commit and the game
//! loop"; `bench/scripts/history-commit.sh` runs both, idle and under two
//! synced writers).
//!
//! ```text
//! history-bench commit [--dir DIR] [--seconds 3] [--rounds 3] [--poll-us 1000] [--label TEXT]
//! history-bench flood  [--dir DIR] [--rounds 3] [--rate 15000] [--flood-seconds 1]
//!                      [--settle 6] [--hz 100] [--max-clients 64] [--sources 4] [--file on|off]
//!                      [--label TEXT]
//! ```
//!
//! `--dir` is where the history files go (the system's temporary directory
//! by default: say which filesystem it is on when quoting a figure). Each
//! case prints one line per round, then the median and range of each
//! figure over the rounds; `commit.rs` and `flood.rs` say what is measured.

mod commit;
mod flood;
mod summary;

use std::process::ExitCode;

use netcode_bench::cli::Options;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((case, rest)) = args.split_first() else {
        eprintln!("usage: history-bench commit|flood [--option value]...");
        return ExitCode::from(1);
    };
    let result = Options::parse(rest).and_then(|options| match case.as_str() {
        "commit" => commit::run(options),
        "flood" => flood::run(options),
        other => Err(format!("unknown case {other}: commit or flood")),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}
