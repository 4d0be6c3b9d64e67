//! The HTTP face of the matcher: `POST /token` for callers holding the
//! bearer secret, `GET /health` for the orchestrator's probes, and the
//! status code every failure gets.
//!
//! The secret is checked before the body is read, so callers without it
//! learn nothing else. A body that is not the JSON object asked for, in
//! any way, is 400. A browser's request (`"transport": "webtransport"`)
//! gets a token for one server and that server's WebTransport URL and
//! certificate hash. With a fleet to allocate from, a UDP client's request
//! goes allocate, then issue: the protocol is checked first (a request the
//! matcher refuses allocates nothing), the [`FleetSource`] allocates a game
//! server, and the [`Matcher`] issues a token naming it.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::fleet::{AllocateError, FleetSource};
use crate::issue::{BrowserToken, IssueError, Matcher};
use crate::metrics::TokenIssued;
use crate::parse::{IdError, parse_id};

/// The largest request body read: a token request is a few dozen bytes.
pub const MAX_BODY_BYTES: usize = 4096;

/// What the routes share: the matcher, and the fleet native clients'
/// servers are allocated from, if any.
#[derive(Debug, Clone)]
struct Routes {
    matcher: Arc<Matcher>,
    fleet: Option<Arc<FleetSource>>,
}

/// The matcher's routes, issuing tokens with `matcher` for the servers it
/// lists, or, given a `fleet`, for a UDP client's server allocated from it.
pub fn router(matcher: Arc<Matcher>, fleet: Option<Arc<FleetSource>>) -> Router {
    Router::new()
        .route("/token", post(token))
        .route("/health", get(health))
        .with_state(Routes { matcher, fleet })
}

/// What `POST /token` takes: ids as JSON numbers, or as strings in decimal
/// or 0x hex (JSON numbers above 2^53 do not survive every client), and
/// the transport the client connects over.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenRequest {
    protocol_id: Id,
    client_id: Id,
    #[serde(default)]
    transport: Transport,
}

/// How the client reaches the server: `"udp"` (the default) or
/// `"webtransport"` (a browser).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Transport {
    #[default]
    Udp,
    WebTransport,
}

/// An id as a JSON number or string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Id {
    Number(u64),
    Text(String),
}

impl Id {
    fn value(&self) -> Result<u64, IdError> {
        match self {
            Self::Number(n) => Ok(*n),
            Self::Text(text) => parse_id(text),
        }
    }
}

/// What `POST /token` answers.
#[derive(Debug, Serialize)]
struct TokenAnswer {
    /// The 2048-byte connect token, standard base64.
    connect_token: String,
    client_id: u64,
    /// Seconds the token stays valid.
    expire_seconds: u32,
    /// For a browser: where its token's one server takes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    webtransport: Option<WebTransportAnswer>,
    /// For a server allocated from a fleet: the one server the token
    /// names, and its `GameServer`'s name.
    #[serde(skip_serializing_if = "Option::is_none")]
    allocated: Option<AllocatedAnswer>,
}

/// The game server allocated for this token.
#[derive(Debug, Serialize)]
struct AllocatedAnswer {
    server: String,
    game_server: String,
}

/// Where a browser opens its WebTransport session.
#[derive(Debug, Serialize)]
struct WebTransportAnswer {
    url: String,
    /// The certificate's SHA-256 hash in hex, to pin; `null` for a
    /// certificate browsers trust.
    certificate_hash: Option<String>,
    /// The server's WebSocket fallback, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    websocket_url: Option<String>,
}

/// A failure: its status and a JSON body saying why.
struct Failure(StatusCode, String);

/// A failure the caller may cure by asking again after a wait (its
/// `Retry-After`, in whole seconds).
struct RetryLater(Failure, Duration);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let Failure(status, why) = self;
        let mut response = json(status, &serde_json::json!({ "error": why }));
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// Why a request got no token: a failure to answer as it is, or one to
/// answer with a `Retry-After`.
enum Refusal {
    Now(Failure),
    Later(RetryLater),
}

impl From<Failure> for Refusal {
    fn from(failure: Failure) -> Self {
        Self::Now(failure)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Self::Now(failure) => failure.into_response(),
            Self::Later(later) => later.into_response(),
        }
    }
}

impl IntoResponse for RetryLater {
    fn into_response(self) -> Response {
        let RetryLater(failure, wait) = self;
        let mut response = failure.into_response();
        let seconds = wait.as_secs().max(1);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        response
    }
}

/// `value` as a JSON response with `status`.
fn json(status: StatusCode, value: &impl Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(body),
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn health() -> &'static str {
    "ok"
}

async fn token(State(routes): State<Routes>, request: Request) -> Response {
    match issue(&routes, request).await {
        Ok(answer) => {
            let transport = match answer.webtransport {
                Some(_) => "webtransport",
                None => "udp",
            };
            let mut response = json(StatusCode::OK, &answer);
            response.extensions_mut().insert(TokenIssued(transport));
            response
        }
        Err(failure) => failure.into_response(),
    }
}

async fn issue(routes: &Routes, request: Request) -> Result<TokenAnswer, Refusal> {
    let matcher = &routes.matcher;
    if !matcher.secret().presented_in(request.headers()) {
        return Err(Failure(
            StatusCode::UNAUTHORIZED,
            "a bearer secret is required".into(),
        )
        .into());
    }
    let body = read_body(request).await?;
    let bad = |why: String| Failure(StatusCode::BAD_REQUEST, why);
    let asked: TokenRequest = serde_json::from_slice(&body).map_err(|e| {
        bad(format!(
            "expected {{\"protocol_id\": ID, \"client_id\": ID}}, and optionally \
             \"transport\": \"udp\" or \"webtransport\": {e}"
        ))
    })?;
    let protocol_id = asked.protocol_id.value().map_err(|e| bad(e.to_string()))?;
    let client_id = asked.client_id.value().map_err(|e| bad(e.to_string()))?;
    let mut allocated = None;
    let (token, webtransport) = match (asked.transport, &routes.fleet) {
        (transport, Some(fleet)) => {
            // Checked before allocating, so that a refused request wastes
            // no game server.
            if !matcher.serves_protocol(protocol_id) {
                return Err(refused(IssueError::UnknownProtocol(protocol_id)).into());
            }
            let server = match transport {
                Transport::Udp => fleet.allocate().await,
                Transport::WebTransport => fleet.allocate_for_browser().await,
            }
            .map_err(unallocated)?;
            let token = matcher
                .issue_for(protocol_id, client_id, &[server.server])
                .map_err(refused)?;
            allocated = Some(AllocatedAnswer {
                server: server.server.to_string(),
                game_server: server.game_server_name,
            });
            let answer = server.browser.map(|browser| WebTransportAnswer {
                url: browser.url,
                certificate_hash: Some(browser.certificate_hash),
                websocket_url: None,
            });
            (token, answer)
        }
        (Transport::Udp, None) => (
            matcher.issue(protocol_id, client_id).map_err(refused)?,
            None,
        ),
        (Transport::WebTransport, None) => {
            let BrowserToken {
                token,
                url,
                certificate_hash,
                websocket_url,
                ..
            } = matcher
                .issue_webtransport(protocol_id, client_id)
                .map_err(refused)?;
            let answer = WebTransportAnswer {
                url,
                certificate_hash,
                websocket_url,
            };
            (token, Some(answer))
        }
    };
    Ok(TokenAnswer {
        connect_token: STANDARD.encode(token),
        client_id,
        expire_seconds: matcher.expire_seconds(),
        webtransport,
        allocated,
    })
}

/// The answer to a request the matcher could not issue a token for.
fn refused(e: IssueError) -> Failure {
    let status = match e {
        IssueError::UnknownProtocol(_) | IssueError::NoBrowserServers => StatusCode::NOT_FOUND,
        IssueError::NoBrowserServerAvailable => StatusCode::SERVICE_UNAVAILABLE,
        IssueError::Build(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    Failure(status, e.to_string())
}

/// The answer to a request no game server was allocated for.
fn unallocated(e: AllocateError) -> Refusal {
    let failure = Failure(e.http_status(), e.to_string());
    match e.retry_after() {
        Some(wait) => Refusal::Later(RetryLater(failure, wait)),
        None => Refusal::Now(failure),
    }
}

/// The request's body, at most [`MAX_BODY_BYTES`].
async fn read_body(request: Request) -> Result<Bytes, Failure> {
    axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|e| {
            Failure(
                StatusCode::BAD_REQUEST,
                format!("unreadable body (at most {MAX_BODY_BYTES} bytes): {e}"),
            )
        })
}
