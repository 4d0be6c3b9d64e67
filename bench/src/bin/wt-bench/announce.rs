//! How a server process (`wt-bench serve`, or the C reference's program)
//! tells the measuring process where it listens: one `READY` line on
//! stdout, then a `STATS` line for each `stats` line on stdin, until stdin
//! ends, which ends the process (`ServerProcess` in `server.rs` reads
//! them).

use std::io::{BufRead, Write};
use std::net::SocketAddr;

/// Says where to connect, then answers `stats` on stdin with `stats()`
/// and ends the process at the end of input.
pub(crate) fn ready(
    udp: Option<SocketAddr>,
    url: &str,
    hash: &str,
    websocket: Option<&str>,
    stats: impl Fn() -> String + Send + 'static,
) {
    let udp = udp.map_or("-".to_string(), |a| a.to_string());
    let websocket = websocket.unwrap_or("-");
    println!("READY udp={udp} url={url} hash={hash} ws={websocket}");
    let _ = std::io::stdout().flush();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line.as_deref() {
                Ok("stats") => {
                    println!("STATS {}", stats());
                    let _ = std::io::stdout().flush();
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        std::process::exit(0);
    });
}
