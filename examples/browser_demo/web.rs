//! The demo's HTTP side (axum): the page, the built wasm client, tokens
//! for browsers, `/status` and the pages' reports.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use netcode_examples::{CONNECT_TOKEN_EXPIRY, CONNECT_TOKEN_TIMEOUT, PROTOCOL_ID, to_hex};
use netcode_tokio::proto::Key;
use netcode_tokio::{ConnectTokenBuilder, generate_key, random_client_id, unix_time};
use netcode_webtransport::WebTransport;
use serde_json::{Value, json};

use super::status::{self, Status};

/// The page.
const INDEX: &str = include_str!("index.html");

/// The wasm client's files, as `netcode-browser/build-web.sh` writes them.
const CLIENT_FILES: [(&str, &str); 2] = [
    ("netcode_browser.js", "text/javascript"),
    ("netcode_browser_bg.wasm", "application/wasm"),
];

/// The largest report a page may post.
const MAX_REPORT_BYTES: usize = 4096;

/// Timeout of the tokens the server must refuse: the page sees the
/// refusal within seconds.
const REFUSED_TIMEOUT: i32 = 2;

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) endpoint: Arc<WebTransport>,
    pub(crate) websocket_url: String,
    pub(crate) host: String,
    pub(crate) udp: SocketAddr,
    pub(crate) key: Key,
    pub(crate) status: Arc<Mutex<Status>>,
    pub(crate) web: PathBuf,
}

/// Fails, saying how to build it, unless the wasm client is in `web`.
pub(crate) fn check_client_built(web: &Path) -> Result<(), String> {
    for (file, _) in CLIENT_FILES {
        if !web.join(file).is_file() {
            return Err(format!(
                "the browser client is not built ({} is missing): run `bash netcode-browser/build-web.sh {}` first, or pass --web DIR",
                web.join(file).display(),
                web.display()
            ));
        }
    }
    Ok(())
}

/// The demo's routes.
pub(crate) fn router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/pkg/{file}", get(client_file))
        .route("/token", get(token))
        .route("/status", get(status_json))
        .route("/report", post(report))
        .with_state(shared)
}

async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response()
}

async fn client_file(
    State(shared): State<Shared>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    let Some((name, kind)) = CLIENT_FILES.iter().find(|(name, _)| *name == file) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match tokio::fs::read(shared.web.join(name)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, *kind)], bytes).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET /token[?kind=expired|foreign]`: a token for this server's UDP
/// address (which browsers reach over WebTransport), with where to go.
async fn token(State(shared): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let kind = query
        .as_deref()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("kind=")))
        .unwrap_or("fresh");
    let Ok(client_id) = random_client_id() else {
        return failure(StatusCode::INTERNAL_SERVER_ERROR, "no random client id");
    };
    let foreign_key;
    let mut builder = match kind {
        "fresh" | "expired" => ConnectTokenBuilder::new(PROTOCOL_ID, &shared.key, client_id),
        "foreign" => {
            let Ok(key) = generate_key() else {
                return failure(StatusCode::INTERNAL_SERVER_ERROR, "no random key");
            };
            foreign_key = key;
            ConnectTokenBuilder::new(PROTOCOL_ID, &foreign_key, client_id)
        }
        _ => return failure(StatusCode::BAD_REQUEST, "kind is fresh, expired or foreign"),
    };
    builder = builder
        .server_addresses([shared.udp])
        .expire_seconds(CONNECT_TOKEN_EXPIRY)
        .timeout_seconds(CONNECT_TOKEN_TIMEOUT);
    if kind != "fresh" {
        builder = builder.timeout_seconds(REFUSED_TIMEOUT);
    }
    if kind == "expired" {
        builder = builder.issued_at(unix_time().saturating_sub(4 * CONNECT_TOKEN_EXPIRY as u64));
    }
    match builder.generate() {
        Ok(token) => json_response(&json!({
            "connect_token": to_hex(&token),
            "client_id": client_id,
            "kind": kind,
            "url": shared.endpoint.url(&shared.host),
            "certificate_hash": shared.endpoint.certificate_hash_hex(),
            "websocket_url": shared.websocket_url,
        })),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn status_json(State(shared): State<Shared>) -> Response {
    let mut answer = status::lock(&shared.status).to_json();
    let web = shared.endpoint.stats();
    answer["webtransport"] = json!({
        "sessions_open": web.sessions_open,
        "sessions_accepted": web.sessions_accepted,
        "datagrams_received": web.datagrams_received,
        "datagrams_sent": web.datagrams_sent,
        "refused": web.sessions_over_cap + web.sessions_wrong_path + web.connections_refused,
    });
    json_response(&answer)
}

/// `POST /report`: a page's JSON object with a `"page"` string naming it.
async fn report(State(shared): State<Shared>, body: Bytes) -> Response {
    if body.len() > MAX_REPORT_BYTES {
        return failure(StatusCode::PAYLOAD_TOO_LARGE, "reports are small");
    }
    let Ok(report) = serde_json::from_slice::<Value>(&body) else {
        return failure(StatusCode::BAD_REQUEST, "a report is a JSON object");
    };
    let Some(page) = report
        .get("page")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return failure(StatusCode::BAD_REQUEST, "a report names its page");
    };
    status::lock(&shared.status).report(page, report);
    StatusCode::NO_CONTENT.into_response()
}

fn json_response(value: &Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn failure(status: StatusCode, why: &str) -> Response {
    (status, json_response(&json!({ "error": why }))).into_response()
}
