//! The fleet source against a fake Agones allocator on loopback (axum,
//! speaking the allocator's REST JSON and recording what it is sent): an
//! allocated server is the one the token names, and a netcode client
//! connects to it with that token; the request names the namespace, the
//! selectors and the `READY` state; no free server, a silent or dead
//! allocator and malformed answers are typed errors within the timeout; an
//! unknown protocol allocates nothing. Then the same fake behind mutual TLS
//! with certificates made here: allocation works with the client
//! certificate and fails without it, with an untrusted one, or when the
//! allocator's certificate is not from the CA the matcher was given.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use netcode_matcher::fleet::{AllocationMetadata, parse_url};
use netcode_matcher::{
    AllocateError, Allocated, FleetIssueError, FleetOptions, FleetSource, IssueError, Matcher,
};
use netcode_tokio::proto::ConnectToken;
use netcode_tokio::{Client, Incoming, Key, Server, ServerConfig, ServerEvent};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_names_the_allocated_server_and_a_client_connects_with_it() {
    let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(KEY));
    let mut server = Server::new("127.0.0.1:0", config).await.unwrap();
    server.start(4).await.unwrap();
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
    let issued = fleet.issue(&matcher(), PROTOCOL_ID, 4242).await.unwrap();
    assert_eq!(issued.allocated.server, game_server);
    assert_eq!(issued.allocated.game_server_name, "netcode-8fx2k-q7w4d");
    assert_eq!(issued.allocated.node_name, "kind-worker");

    let token = ConnectToken::read(&issued.token).expect("a well-formed token");
    assert_eq!(token.protocol_id, PROTOCOL_ID);
    assert_eq!(token.server_addresses.len(), 1);
    assert_eq!(token.server_addresses[0], game_server);

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, Method::POST);
    assert_eq!(requests[0].path, "/gameserverallocation");
    assert_eq!(
        requests[0].content_type.as_deref(),
        Some("application/json")
    );

    let mut client = Client::new("127.0.0.1:0").await.unwrap();
    client.connect(&issued.token).unwrap();
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
    let (fake, url) = plain_allocator().await;
    fake.answer(
        429,
        r#"{"code": 8, "message": "there is no available GameServer to allocate", "details": []}"#,
    );
    let fleet = source(&options(&url));
    assert_eq!(
        fleet.allocate().await,
        Err(AllocateError::NoServerAvailable)
    );
    let refused = fleet.issue(&matcher(), PROTOCOL_ID, 1).await.unwrap_err();
    assert_eq!(
        refused,
        FleetIssueError::Allocate(AllocateError::NoServerAvailable)
    );
    assert_eq!(refused.http_status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.retry_after().is_some());
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn an_unknown_protocol_allocates_nothing() {
    let (fake, url) = plain_allocator().await;
    fake.answer(200, answer("127.0.0.1", netcode_port(7001), json!([])));
    let fleet = source(&options(&url));
    assert_eq!(
        fleet.issue(&matcher(), PROTOCOL_ID + 1, 1).await,
        Err(FleetIssueError::Issue(IssueError::UnknownProtocol(
            PROTOCOL_ID + 1
        )))
    );
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn a_silent_allocator_times_out_within_the_bound() {
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
        matches!(&error, AllocateError::BadAnswer(why) if why.contains("no address of type")),
        "{error}"
    );

    fake.answer(200, answer("localhost", ports, addresses));
    let named = source(&options(&url)).allocate().await.unwrap();
    assert!(named.server.ip().is_loopback(), "{named:?}");
    assert_eq!(named.server.port(), 7005);
}

/// Certificates for the mutual TLS test, as PEM files in a directory of
/// their own.
struct Pki {
    dir: PathBuf,
    server_chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    server_key: rustls::pki_types::PrivateKeyDer<'static>,
    client_ca: rustls::pki_types::CertificateDer<'static>,
}

/// A CA certificate and its issuer.
fn ca(name: &str) -> (rcgen::Certificate, rcgen::Issuer<'static, rcgen::KeyPair>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let certificate = params.self_signed(&key).unwrap();
    (certificate, rcgen::Issuer::new(params, key))
}

/// A leaf certificate for `names`, for `usage`, signed by `issuer`.
fn leaf(
    names: &[&str],
    usage: rcgen::ExtendedKeyUsagePurpose,
    issuer: &rcgen::Issuer<'_, rcgen::KeyPair>,
) -> (rcgen::Certificate, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = rcgen::CertificateParams::new(names).unwrap();
    params.extended_key_usages = vec![usage];
    (params.signed_by(&key, issuer).unwrap(), key)
}

impl Pki {
    /// A server CA and a certificate for 127.0.0.1 it signed; a client CA
    /// and a client certificate it signed; a second, unrelated CA with a
    /// client certificate of its own.
    fn new(name: &str) -> Self {
        use rcgen::ExtendedKeyUsagePurpose::{ClientAuth, ServerAuth};
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let (server_ca, server_issuer) = ca("allocator server CA");
        let (server_cert, server_key) = leaf(&["127.0.0.1"], ServerAuth, &server_issuer);
        let (client_ca, client_issuer) = ca("allocator client CA");
        let (client_cert, client_key) = leaf(&["matcher"], ClientAuth, &client_issuer);
        let (stranger_ca, stranger_issuer) = ca("some other CA");
        let (stranger_cert, stranger_key) = leaf(&["matcher"], ClientAuth, &stranger_issuer);
        for (file, pem) in [
            ("server-ca.pem", server_ca.pem()),
            ("client.pem", client_cert.pem()),
            ("client.key", client_key.serialize_pem()),
            ("stranger-ca.pem", stranger_ca.pem()),
            ("stranger.pem", stranger_cert.pem()),
            ("stranger.key", stranger_key.serialize_pem()),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Self {
            dir,
            server_chain: vec![server_cert.der().clone()],
            server_key: rustls::pki_types::PrivatePkcs8KeyDer::from(server_key.serialize_der())
                .into(),
            client_ca: client_ca.der().clone(),
        }
    }

    fn path(&self, file: &str) -> Option<PathBuf> {
        Some(self.dir.join(file))
    }
}

/// The fake behind TLS that requires a client certificate signed by the
/// client CA: accepted handshakes serve the fake, failed ones are counted.
struct MutualTls {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    refused: Arc<AtomicUsize>,
}

impl axum::serve::Listener for MutualTls {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, peer)) = self.tcp.accept().await else {
                continue;
            };
            match tokio::time::timeout(LIMIT, self.acceptor.accept(stream)).await {
                Ok(Ok(tls)) => return (tls, peer),
                _ => {
                    self.refused.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

async fn mutual_tls_allocator(pki: &Pki) -> (Arc<Fake>, String, Arc<AtomicUsize>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.client_ca.clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(pki.server_chain.clone(), pki.server_key.clone_key())
        .unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", tcp.local_addr().unwrap());
    let refused = Arc::new(AtomicUsize::new(0));
    let listener = MutualTls {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        refused: Arc::clone(&refused),
    };
    let fake = Arc::new(Fake::default());
    let app = routes(&fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, url, refused)
}

/// Whether `result` is the failure of a client certificate the allocator
/// refused: its TLS alert naming `cause`, or, when the refusal arrived
/// after the client had finished its side of the TLS 1.3 handshake, the
/// connection closed under the request. The callers also check that the
/// allocator counted a refused handshake and received no request.
fn refused_by_the_allocator(result: &Result<Allocated, AllocateError>, cause: &str) -> bool {
    matches!(result, Err(AllocateError::Unreachable(why))
        if why.contains(cause) || why.contains("connection was not ready") || why.contains("connection closed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_allocation_works_with_the_client_certificate_only() {
    let pki = Pki::new("fleet-mutual-tls");
    let (fake, url, refused) = mutual_tls_allocator(&pki).await;
    fake.answer(200, answer("127.0.0.1", netcode_port(7010), json!([])));
    let with = |cert: &str, key: &str, ca: &str| {
        let mut options = options(&url);
        options.client_cert = pki.path(cert);
        options.client_key = pki.path(key);
        options.ca = pki.path(ca);
        source(&options)
    };
    let allocate = |fleet: FleetSource| async move {
        tokio::time::timeout(LIMIT, fleet.allocate())
            .await
            .expect("in time")
    };

    let allocated = allocate(with("client.pem", "client.key", "server-ca.pem"))
        .await
        .expect("allocated over mutual TLS");
    assert_eq!(allocated.server, "127.0.0.1:7010".parse().unwrap());
    assert_eq!(fake.requests().len(), 1);
    assert_eq!(refused.load(Ordering::SeqCst), 0);

    // No client certificate: the allocator refuses the handshake.
    let mut anonymous = options(&url);
    anonymous.ca = pki.path("server-ca.pem");
    let result = allocate(source(&anonymous)).await;
    assert!(
        refused_by_the_allocator(&result, "CertificateRequired"),
        "{result:?}"
    );
    // A client certificate from a CA the allocator does not trust.
    let result = allocate(with("stranger.pem", "stranger.key", "server-ca.pem")).await;
    assert!(refused_by_the_allocator(&result, "UnknownCA"), "{result:?}");
    // The fake counts a refused handshake on its own task, which may run
    // after the client has seen the refusal.
    let deadline = Instant::now() + LIMIT;
    while refused.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(refused.load(Ordering::SeqCst), 2);
    // The allocator's certificate checked against another CA: the matcher
    // refuses it (the allocator sees the handshake fail too).
    let result = allocate(with("client.pem", "client.key", "stranger-ca.pem")).await;
    assert!(
        matches!(&result, Err(AllocateError::Unreachable(why)) if why.contains("UnknownIssuer")),
        "{result:?}"
    );
    assert_eq!(fake.requests().len(), 1, "no refused request got through");
}
