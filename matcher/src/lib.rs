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
//! A missing or wrong secret is 401, a body that is not that object 400, a
//! protocol the fleet does not serve 404. `GET /health` answers `ok`.
//!
//! The binary (`matcher --help`) takes its configuration from the
//! command line ([`Options`]); [`router`] serves a [`Matcher`] in any axum
//! program.

mod config;
mod http;
mod issue;

pub use config::{Options, parse_id};
pub use http::{MAX_BODY_BYTES, router};
pub use issue::{IssueError, Matcher};
