//! # netcode-matcher
//!
//! An example token service for a fleet of netcode dedicated servers, on
//! axum: a caller presenting the shared bearer secret posts a protocol id
//! and a client id to `/token` and gets back a connect token, base64 in
//! JSON, listing the fleet's servers:
//!
//! ```text
//! POST /token
//! Authorization: Bearer <secret>
//! {"protocol_id": "0x1122334455667788", "client_id": 42}
//!
//! 200 {"connect_token": "<base64 of 2048 bytes>", "client_id": 42, "expire_seconds": 30}
//! ```
//!
//! A browser asks with `"transport": "webtransport"` (the default is
//! `"udp"`) and gets a token listing the one server it will reach, the
//! next of those configured with `--webtransport`, and where to reach it:
//! the URL of its WebTransport endpoint and, for a self-signed
//! certificate, the SHA-256 hash to pin (64 hex digits; `null` for a
//! certificate browsers trust), and where `--websocket` gives the server a
//! WebSocket fallback, its URL (`websocket_url`), which the browser client
//! takes when WebTransport does not open:
//!
//! ```text
//! POST /token
//! Authorization: Bearer <secret>
//! {"protocol_id": "0x1122334455667788", "client_id": 42, "transport": "webtransport"}
//!
//! 200 {"connect_token": "<base64 of 2048 bytes>", "client_id": 42, "expire_seconds": 30,
//!      "webtransport": {"url": "https://203.0.113.10:7001/netcode", "certificate_hash": "<64 hex digits>",
//!                       "websocket_url": "wss://eu1.example.com:7002/netcode"}}
//! ```
//!
//! A missing or wrong secret is 401, a body that is not that object 400, a
//! protocol the fleet does not serve 404, a browser's request to a fleet
//! without WebTransport 404, and one when no such server has a
//! certificate hash to hand out (its hash file unreadable or malformed)
//! 503. `GET /health` answers `ok`.
//!
//! The binary (`matcher --help`) takes its configuration from the
//! command line ([`Options`], [`LimitOptions`], [`WebTransportSpec`]) and
//! [`run`]s: it serves the routes with netcode-metrics' bounded HTTP/1
//! server ([`netcode_metrics::http`]: a cap on connections that closes the
//! oldest idle one when full, header-read, idle and request timeouts,
//! graceful shutdown), rate limits per source address and per secret (429
//! with `Retry-After`), and Prometheus metrics on a listener of their own
//! (`--metrics`). What it reports goes through the `log` crate; the binary
//! logs to stderr. [`router`] serves a bare [`Matcher`] in any axum
//! program, without those limits.
//!
//! Instead of a static list, tokens can name a game server allocated for
//! each request from an Agones fleet: [`fleet`] ([`FleetOptions`],
//! [`FleetSource`]) asks the Agones allocator service for a `Ready` server
//! over mutual TLS; the token route then has the [`Matcher`] issue a token
//! naming it.
//!
//! # Shape
//!
//! Each module imports only those listed before it, none in a loop:
//!
//! | module | holds | imports |
//! | --- | --- | --- |
//! | `parse` | ids and durations as text | |
//! | `secret` | the bearer secret, read from `Authorization` | |
//! | `webtransport` | the servers that take browsers, their certificate hashes | |
//! | `metrics` | what is counted; the counting middleware; `GET /metrics` | |
//! | `fleet` | the Agones allocator client and its options | `parse` |
//! | `issue` | the [`Matcher`]: who may ask, tokens for given servers | `secret`, `webtransport` |
//! | `monitor` | limits that bite, counted and logged; the HTTP server's observer | `metrics` |
//! | `limits` | the limits' options; the rate limits | `parse`, `secret`, `metrics`, `monitor` |
//! | `config` | the command line, read into a [`Matcher`] and a [`FleetSource`] | `parse`, `fleet`, `issue`, `limits`, `webtransport` |
//! | `http` | the routes: allocate (with a fleet), then issue | `parse`, `fleet`, `issue`, `metrics` |
//! | `run` | the program: listeners, layers, shutdown | `config`, `fleet`, `http`, `limits`, `metrics`, `monitor` |
//!
//! The [`Matcher`] holds no fleet source and the fleet source no matcher:
//! only the token route knows both. The peer address a rate limit counts
//! by is the HTTP server's ([`netcode_metrics::http::Peer`]).

mod config;
pub mod fleet;
mod http;
mod issue;
mod limits;
mod metrics;
mod monitor;
mod parse;
mod run;
mod secret;
mod webtransport;

pub use config::{ConfigError, Options};
pub use fleet::{
    AllocateError, Allocated, BROWSER_HASH_ANNOTATION, BROWSER_LABEL, BROWSER_URL_ANNOTATION,
    BrowserEndpoint, FleetConfigError, FleetOptions, FleetSource,
};
pub use http::{MAX_BODY_BYTES, router};
pub use issue::{BrowserServersError, BrowserToken, IssueError, Matcher};
pub use limits::{LimitOptions, ZeroBurst};
pub use parse::{IdError, SecondsError, parse_id, parse_seconds};
pub use run::{CapError, DEFAULT_MAX_CONNECTIONS, RunError, run};
pub use webtransport::{
    CertificateHash, HashFileError, NotAHash, SpecError, WebSocketSpec, WebTransportSpec,
};
