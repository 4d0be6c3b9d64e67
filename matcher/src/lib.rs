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
//! certificate browsers trust):
//!
//! ```text
//! POST /token
//! Authorization: Bearer <secret>
//! {"protocol_id": "0x1122334455667788", "client_id": 42, "transport": "webtransport"}
//!
//! 200 {"connect_token": "<base64 of 2048 bytes>", "client_id": 42, "expire_seconds": 30,
//!      "webtransport": {"url": "https://203.0.113.10:7001/netcode", "certificate_hash": "<64 hex digits>"}}
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
//! [`run`]s: its own accept loop serves the routes with a cap on
//! connections, header-read, idle and request timeouts, rate limits per
//! source address and per secret (429 with `Retry-After`), and Prometheus
//! metrics on a listener of their own (`--metrics`). [`router`] serves a
//! bare [`Matcher`] in any axum program, without those limits.
//!
//! Instead of a static list, tokens can name a game server allocated for
//! each request from an Agones fleet: [`fleet`] ([`FleetOptions`],
//! [`FleetSource`]) asks the Agones allocator service for a `Ready` server
//! over mutual TLS and issues a token naming it.

mod config;
pub mod fleet;
mod http;
mod issue;
mod limits;
mod metrics;
mod monitor;
mod run;
mod serve;
mod slots;
mod webtransport;

pub use config::{LimitOptions, Options, parse_id, parse_seconds};
pub use fleet::{AllocateError, Allocated, FleetIssueError, FleetOptions, FleetSource};
pub use http::{MAX_BODY_BYTES, router};
pub use issue::{BrowserToken, IssueError, Matcher};
pub use run::{DEFAULT_MAX_CONNECTIONS, run};
pub use webtransport::{CertificateHash, WebTransportSpec};
