//! The fleet source against a fake Agones allocator on loopback (axum,
//! speaking the allocator's REST JSON and recording what it is sent): the
//! token route allocates a server, and its token names that server and
//! connects a netcode client to it; the request names the namespace, the
//! selectors and the `READY` state; no free server, a silent or dead
//! allocator and malformed answers are typed errors within the timeout (no
//! free server is 503 with `Retry-After` on the route); an unknown
//! protocol allocates nothing. The same fake behind mutual TLS is
//! `mutual_tls`'s; browsers allocated from the fleet, `browsers`'s.

mod browsers;
mod mutual_tls;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_matcher::fleet::{AllocationMetadata, parse_url};
use netcode_matcher::{AllocateError, FleetOptions, FleetSource, Matcher, router};
use netcode_tokio::proto::ConnectToken;
use netcode_tokio::{Client, Incoming, Key, Server, ServerConfig, ServerEvent};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::common::{shared_turn, start_nowait, until_unix_second};

const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;
const KEY: [u8; 32] = [0x5a; 32];
/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

/// A request the fake allocator received.
#[derive(Debug, Clone)]
struct Recorded {
    method: Method,
    path: String,
    content_type: Option<String>,
    body: Value,
}

/// The fake's state: what it answers next, and what it was sent.
#[derive(Default)]
struct Fake {
    answer: Mutex<(u16, String)>,
    requests: Mutex<Vec<Recorded>>,
}

impl Fake {
    fn answer(&self, status: u16, body: impl Into<String>) {
        *self.answer.lock().unwrap() = (status, body.into());
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn fake_allocator(
    State(fake): State<Arc<Fake>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    fake.requests.lock().unwrap().push(Recorded {
        method,
        path: uri.path().to_owned(),
        content_type: headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let (status, body) = fake.answer.lock().unwrap().clone();
    let status = StatusCode::from_u16(status).unwrap();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn routes(fake: &Arc<Fake>) -> Router {
    Router::new()
        .fallback(fake_allocator)
        .with_state(Arc::clone(fake))
}

/// The fake on plain HTTP (an allocator run with TLS off): its state and
/// URL.
async fn plain_allocator() -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = routes(&fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, url)
}

/// An allocation answer as the allocator's gateway writes it: every field,
/// empty ones included, 64-bit integers as strings.
fn answer(address: &str, ports: Value, addresses: Value) -> String {
    json!({
        "gameServerName": "netcode-8fx2k-q7w4d",
        "ports": ports,
        "address": address,
        "addresses": addresses,
        "nodeName": "kind-worker",
        "source": "local",
        "metadata": {"labels": {"agones.dev/fleet": "netcode"}, "annotations": {}},
        "counters": {"rooms": {"count": "1", "capacity": "10"}},
        "lists": {},
    })
    .to_string()
}

fn netcode_port(port: u16) -> Value {
    json!([{"name": "metrics", "port": 9100}, {"name": "netcode", "port": port}])
}

fn matcher() -> Matcher {
    Matcher::new(
        "secret".into(),
        Key::from_bytes(KEY),
        Vec::new(),
        vec![PROTOCOL_ID],
        30,
        5,
    )
}

fn source(options: &FleetOptions) -> FleetSource {
    FleetSource::from_options(options)
        .expect("valid options")
        .expect("a fleet source")
}

fn options(url: &str) -> FleetOptions {
    FleetOptions::new(parse_url(url).unwrap())
}

/// What the token route answered: its status, its `Retry-After`, and its
/// JSON body.
struct RouteAnswer {
    status: StatusCode,
    retry_after: Option<String>,
    json: Value,
}

/// Asks the token route of a matcher allocating from `fleet` for a token
/// for `client_id` on `protocol_id`, presenting the secret.
async fn ask_route(fleet: FleetSource, protocol_id: u64, client_id: u64) -> RouteAnswer {
    let body = json!({"protocol_id": format!("{protocol_id:#x}"), "client_id": client_id});
    ask_route_with(fleet, &body).await
}

/// Asks the token route of a matcher allocating from `fleet` with the
/// request `body`, presenting the secret.
async fn ask_route_with(fleet: FleetSource, body: &Value) -> RouteAnswer {
    let app = router(Arc::new(matcher()), Some(Arc::new(fleet)));
    let request = Request::post("/token")
        .header(header::AUTHORIZATION, "Bearer secret")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = tokio::time::timeout(LIMIT, app.oneshot(request))
        .await
        .expect("answered in time")
        .unwrap();
    let status = response.status();
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .map(|value| value.to_str().unwrap().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    RouteAnswer {
        status,
        retry_after,
        json: serde_json::from_slice(&bytes).expect("a JSON answer"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_names_the_allocated_server_and_a_client_connects_with_it() {
    let _turn = shared_turn().await;
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(KEY));
    let mut server = Server::new("127.0.0.1:0", config).await.unwrap();
    let admitted_from = start_nowait(&mut server, 4);
    let game_server = server.public_address();

    let (fake, url) = plain_allocator().await;
    fake.answer(
        200,
        answer(
            "127.0.0.1",
            netcode_port(game_server.port()),
            json!([{"type": "InternalIP", "address": "127.0.0.1"}]),
        ),
    );
    let fleet = source(&options(&url));
    let allocated = fleet.allocate().await.unwrap();
    assert_eq!(allocated.server, game_server);
    assert_eq!(allocated.game_server_name, "netcode-8fx2k-q7w4d");
    assert_eq!(allocated.node_name, "kind-worker");

    // The token route allocates again, then issues; as of a second the
    // server admits (the matcher issues as of the request).
    until_unix_second(admitted_from).await;
    let answer = ask_route(fleet, PROTOCOL_ID, 4242).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.json);
    assert_eq!(answer.json["client_id"], 4242);
    assert_eq!(answer.json["allocated"]["server"], game_server.to_string());
    assert_eq!(
        answer.json["allocated"]["game_server"],
        "netcode-8fx2k-q7w4d"
    );
    let bytes = STANDARD
        .decode(answer.json["connect_token"].as_str().expect("a token"))
        .unwrap();
    let issued: [u8; 2048] = bytes.try_into().expect("2048 bytes");
    let token = ConnectToken::read(&issued).expect("a well-formed token");
    assert_eq!(token.protocol_id, PROTOCOL_ID);
    assert_eq!(token.server_addresses.len(), 1);
    assert_eq!(token.server_addresses[0], game_server);

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.method, Method::POST);
        assert_eq!(request.path, "/gameserverallocation");
        assert_eq!(request.content_type.as_deref(), Some("application/json"));
    }

    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client.connect(&issued).unwrap();
    let serve = async {
        loop {
            if let Incoming::Event(ServerEvent::ClientConnected { client_id, .. }) =
                server.next().await
            {
                return client_id;
            }
        }
    };
    let (connected, client_id) =
        tokio::time::timeout(LIMIT, async { tokio::join!(client.connected(), serve) })
            .await
            .expect("in time");
    connected.expect("the client connects");
    assert_eq!(client_id, 4242);
    assert_eq!(client.server_address(), Some(game_server));
}

#[tokio::test]
async fn the_request_names_namespace_selectors_and_the_ready_state() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    fake.answer(200, answer("127.0.0.1", netcode_port(7001), json!([])));
    let mut options = options(&format!("{url}/"));
    options.namespace = "games".into();
    options.selectors = vec![
        ("agones.dev/fleet".into(), "netcode".into()),
        ("region".into(), "eu".into()),
    ];
    let fleet = source(&options);
    fleet.allocate().await.unwrap();
    let metadata = AllocationMetadata {
        labels: [("match".to_owned(), "m-1".to_owned())].into(),
        annotations: [("players".to_owned(), "2".to_owned())].into(),
    };
    fleet.allocate_with(&metadata).await.unwrap();

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let selectors = json!([{
        "matchLabels": {"agones.dev/fleet": "netcode", "region": "eu"},
        "gameServerState": "READY",
    }]);
    assert_eq!(
        requests[0].body,
        json!({"namespace": "games", "gameServerSelectors": selectors})
    );
    assert_eq!(
        requests[1].body,
        json!({
            "namespace": "games",
            "gameServerSelectors": selectors,
            "metadata": {"labels": {"match": "m-1"}, "annotations": {"players": "2"}},
        })
    );
    for request in requests {
        assert_eq!(request.path, "/gameserverallocation");
    }
}

#[tokio::test]
async fn no_free_server_is_the_typed_no_server_error() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    fake.answer(
        429,
        r#"{"code": 8, "message": "there is no available GameServer to allocate", "details": []}"#,
    );
    let fleet = source(&options(&url));
    let refused = fleet.allocate().await;
    assert_eq!(refused, Err(AllocateError::NoServerAvailable));
    let error = refused.unwrap_err();
    assert_eq!(error.http_status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(error.retry_after().is_some());
    // The token route answers so, with the wait.
    let answer = ask_route(fleet, PROTOCOL_ID, 1).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    let wait: u64 = answer.retry_after.expect("a Retry-After").parse().unwrap();
    assert!(wait >= 1);
    assert!(
        answer.json["error"]
            .as_str()
            .is_some_and(|why| why.contains("try again later")),
        "{}",
        answer.json
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn an_unknown_protocol_allocates_nothing() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    fake.answer(200, answer("127.0.0.1", netcode_port(7001), json!([])));
    let fleet = source(&options(&url));
    let answer = ask_route(fleet, PROTOCOL_ID + 1, 1).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.json);
    assert!(
        answer.json["error"]
            .as_str()
            .is_some_and(|why| why.contains("no servers for protocol id")),
        "{}",
        answer.json
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_silent_allocator_times_out_within_the_bound() {
    let _turn = shared_turn().await;
    // Connections complete in the kernel's backlog; nothing ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut options = options(&format!("http://{}", silent.local_addr().unwrap()));
    options.timeout = Duration::from_millis(300);
    let fleet = source(&options);
    let started = Instant::now();
    let result = tokio::time::timeout(LIMIT, fleet.allocate())
        .await
        .expect("the allocation gives up by itself");
    let waited = started.elapsed();
    assert_eq!(result, Err(AllocateError::Timeout(options.timeout)));
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    let error = result.unwrap_err();
    assert_eq!(error.http_status(), StatusCode::SERVICE_UNAVAILABLE);
    drop(silent);
}

#[tokio::test]
async fn a_dead_allocator_is_unreachable() {
    let _turn = shared_turn().await;
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let fleet = source(&options(&format!("http://{address}")));
    let result = tokio::time::timeout(LIMIT, fleet.allocate())
        .await
        .expect("in time");
    assert!(
        matches!(&result, Err(AllocateError::Unreachable(why)) if why.contains("refused")),
        "{result:?}"
    );
}

#[tokio::test]
async fn malformed_answers_are_typed_errors() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    let fleet = source(&options(&url));
    let huge = format!(r#"{{"address": "{}"}}"#, "x".repeat(100_000));
    let cases: Vec<(u16, String, &str)> = vec![
        (200, "<html>not json</html>".into(), "not JSON"),
        (200, "[1, 2]".into(), "not a JSON object"),
        (
            200,
            answer(
                "127.0.0.1",
                json!([{"name": "default", "port": 7001}]),
                json!([]),
            ),
            "no port named \"netcode\"",
        ),
        (
            200,
            answer(
                "127.0.0.1",
                json!([{"name": "netcode", "port": 0}]),
                json!([]),
            ),
            "not a port number",
        ),
        (
            200,
            answer(
                "127.0.0.1",
                json!([{"name": "netcode", "port": "70000"}]),
                json!([]),
            ),
            "not a port number",
        ),
        (200, answer("", netcode_port(7001), json!([])), "no address"),
        (200, huge, "longer than"),
    ];
    for (status, body, why) in cases {
        fake.answer(status, body);
        match fleet.allocate().await {
            Err(error @ AllocateError::BadAnswer(_)) => {
                assert!(error.to_string().contains(why), "{error} / {why}");
                assert_eq!(error.http_status(), StatusCode::BAD_GATEWAY);
            }
            other => panic!("{why}: {other:?}"),
        }
    }
    fake.answer(500, "boom\n\u{7}");
    assert_eq!(
        fleet.allocate().await,
        Err(AllocateError::Refused {
            status: 500,
            message: "boom".into()
        })
    );
}

#[tokio::test]
async fn address_types_and_names_pick_what_the_token_names() {
    let _turn = shared_turn().await;
    let (fake, url) = plain_allocator().await;
    let addresses = json!([
        {"type": "Hostname", "address": "kind-worker"},
        {"type": "InternalIP", "address": "127.0.0.2"},
        {"type": "ExternalIP", "address": "127.0.0.3"},
    ]);
    // The port as a string, as lenient reading allows.
    let ports = json!([{"name": "netcode", "port": "7005"}]);
    fake.answer(200, answer("127.0.0.9", ports.clone(), addresses.clone()));
    let by_default = source(&options(&url)).allocate().await.unwrap();
    assert_eq!(by_default.server, "127.0.0.9:7005".parse().unwrap());

    let mut external = options(&url);
    external.address_type = Some("externalip".into());
    let allocated = source(&external).allocate().await.unwrap();
    assert_eq!(allocated.server, "127.0.0.3:7005".parse().unwrap());

    let mut missing = options(&url);
    missing.address_type = Some("ExternalDNS".into());
    let error = source(&missing).allocate().await.unwrap_err();
    assert!(
        matches!(&error, AllocateError::BadAnswer(why) if why.contains("no address of type") && why.contains("--allocator-address-type")),
        "{error}"
    );

    fake.answer(200, answer("localhost", ports, addresses));
    let named = source(&options(&url)).allocate().await.unwrap();
    assert!(named.server.ip().is_loopback(), "{named:?}");
    assert_eq!(named.server.port(), 7005);
}
