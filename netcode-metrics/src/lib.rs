//! # netcode-metrics
//!
//! A netcode dedicated server's figures as Prometheus metrics, with the
//! game loop in charge.
//!
//! * [`ServerMetrics`]: the loop records a snapshot of the server when it
//!   chooses (each tick, or every few hundred milliseconds): the core's
//!   protocol counters, the host's transport counters, the slot count, the
//!   token history's figures and each connected client's traffic. It also
//!   counts the connect and disconnect events the loop hands it.
//! * [`SnapshotCollector`]: a `prometheus_client` collector that encodes
//!   the latest snapshot at scrape time, so per-client series exist only
//!   for the clients connected in it, and none linger after a disconnect.
//! * [`MetricsEndpoint`]: `GET /metrics` over HTTP from a thread of its own
//!   (no async runtime needed in the caller). For a private scrape port
//!   only: it has no authentication.
//! * [`http`]: the bounded HTTP/1 server the endpoint runs on (connection
//!   cap, header-read, idle and request timeouts, connection lifetime,
//!   graceful shutdown, events for the caller to count and log), for
//!   tokio programs that serve HTTP of their own: the netcode matcher
//!   serves its tokens and its metrics with it.
//!
//! [`ServerSnapshot`] is plain data built from the core's types
//! ([`Stats`](netcode_std::proto::stats::Stats),
//! [`ConnectionStats`](netcode_std::ConnectionStats)), so any host can fill
//! one: [`ServerMetrics::record`] does it for a netcode-std server or a
//! netcode-mio one (the same type on mio sockets), and
//! [`ServerMetrics::record_with`] lets a netcode-tokio server's loop fill
//! it from that server's methods of the same names.
//!
//! The README lists every metric with its type and labels.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::{Duration, Instant};
//! use netcode_metrics::{MetricsEndpoint, ServerMetrics};
//! use netcode_std::{Server, ServerConfig, proto::Key};
//!
//! let config = ServerConfig::new(0x1122_3344_5566_7788, Key::from_bytes([7; 32]));
//! let mut server = Server::new("127.0.0.1:40000", config)?;
//! server.start(64)?;
//!
//! let mut metrics = ServerMetrics::new();
//! // A private port: the endpoint has no authentication.
//! let endpoint = MetricsEndpoint::serve("127.0.0.1:9100", metrics.registry())?;
//! println!("metrics on http://{}/metrics", endpoint.local_addr());
//!
//! let epoch = Instant::now();
//! loop {
//!     server.update(epoch.elapsed().as_secs_f64());
//!     while let Some(event) = server.poll_event() {
//!         metrics.count_event(&event);
//!     }
//!     // ... receive and send payloads ...
//!     metrics.record(&server);
//!     server.wait(Duration::from_millis(16));
//! }
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod collector;
mod endpoint;
pub mod http;
mod recorder;
mod shared;
mod snapshot;

pub use collector::SnapshotCollector;
pub use endpoint::{
    CONNECTION_LIFETIME, CONTENT_TYPE, HEADER_READ_TIMEOUT, MAX_CONNECTIONS, METRICS_PATH,
    MetricsEndpoint, encode_text,
};
pub use recorder::ServerMetrics;
pub use snapshot::{
    ClientSnapshot, ServerSnapshot, TokenHistorySnapshot, TokenHistoryWriterSnapshot,
};

/// The Prometheus client this crate encodes with, for registries and
/// metrics of the caller's own.
pub use prometheus_client;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
