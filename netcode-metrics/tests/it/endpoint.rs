//! The HTTP endpoint on loopback, scraped with a real HTTP client: the
//! metrics as of each scrape at `/metrics` with the text format's content
//! type, 404 elsewhere, 405 for other methods, silent connections closed
//! and the connection cap released, and nothing listening after shutdown.

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use netcode_metrics::{
    CONTENT_TYPE, HEADER_READ_TIMEOUT, MAX_CONNECTIONS, MetricsEndpoint, ServerMetrics,
};

use crate::common::sample;

/// An HTTP client that reports every status as an answer, with a bound on
/// each request.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

/// The status, content type and body of `method path` at `address`.
fn request(address: SocketAddr, method: &str, path: &str) -> (u16, String, String) {
    let url = format!("http://{address}{path}");
    let agent = agent();
    let answer = match method {
        "GET" => agent.get(&url).call(),
        "POST" => agent.post(&url).send(""),
        other => panic!("no {other} here"),
    };
    let mut answer = answer.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let content_type = answer
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = answer.body_mut().read_to_string().unwrap();
    (answer.status().as_u16(), content_type, body)
}

fn serve(metrics: &ServerMetrics) -> MetricsEndpoint {
    MetricsEndpoint::serve("127.0.0.1:0", metrics.registry()).unwrap()
}

#[test]
fn metrics_path_answers_with_the_figures_of_the_moment() {
    let mut metrics = ServerMetrics::new();
    metrics.record_with(|s| s.max_clients = 12);
    let endpoint = serve(&metrics);
    assert!(endpoint.local_addr().ip().is_loopback());
    assert_ne!(endpoint.local_addr().port(), 0);

    let (status, content_type, body) = request(endpoint.local_addr(), "GET", "/metrics");
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, CONTENT_TYPE);
    assert!(CONTENT_TYPE.starts_with("text/plain; version=0.0.4"));
    assert_eq!(sample(&body, "netcode_max_clients"), 12.0);

    // The next scrape encodes the next recording.
    metrics.record_with(|s| s.max_clients = 40);
    let (_, _, body) = request(endpoint.local_addr(), "GET", "/metrics?fresh=1");
    assert_eq!(sample(&body, "netcode_max_clients"), 40.0);
    endpoint.shutdown();
}

#[test]
fn other_paths_are_not_found_and_other_methods_not_allowed() {
    let metrics = ServerMetrics::new();
    let endpoint = serve(&metrics);
    for path in [
        "/",
        "/metric",
        "/metrics/",
        "/metrics/extra",
        "/favicon.ico",
    ] {
        let (status, _, body) = request(endpoint.local_addr(), "GET", path);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(!body.contains("netcode_"), "{path}: {body}");
    }
    let (status, _, _) = request(endpoint.local_addr(), "POST", "/metrics");
    assert_eq!(status, 405);
}

#[test]
fn nothing_listens_after_shutdown_or_drop() {
    let metrics = ServerMetrics::new();
    let endpoint = serve(&metrics);
    let address = endpoint.local_addr();
    assert_eq!(request(address, "GET", "/metrics").0, 200);
    endpoint.shutdown();
    let refused = TcpStream::connect_timeout(&address, Duration::from_secs(2));
    assert!(refused.is_err(), "still listening after shutdown");

    let endpoint = serve(&metrics);
    let address = endpoint.local_addr();
    drop(endpoint);
    let refused = TcpStream::connect_timeout(&address, Duration::from_secs(2));
    assert!(refused.is_err(), "still listening after drop");
}

/// Connections that never send a request fill every slot, so a scrape
/// waits; the endpoint closes them after the header read timeout, and the
/// scrape is then answered.
#[test]
fn silent_connections_are_closed_and_free_their_slots() {
    let mut metrics = ServerMetrics::new();
    metrics.record_with(|s| s.max_clients = 3);
    let endpoint = serve(&metrics);
    let address = endpoint.local_addr();
    // Before the connections: the endpoint takes each one after this.
    let started = Instant::now();
    let silent: Vec<TcpStream> = (0..MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(address).unwrap())
        .collect();

    let (status, _, body) = request(address, "GET", "/metrics");
    assert_eq!(status, 200, "{body}");
    assert_eq!(sample(&body, "netcode_max_clients"), 3.0);
    // The scrape waited for a slot: no answer can come before a silent
    // connection has used up its time (a lower bound, whatever the load).
    let waited = started.elapsed();
    assert!(
        waited >= HEADER_READ_TIMEOUT - Duration::from_millis(100),
        "answered after {waited:?}, though every slot was held"
    );

    // Each silent connection was closed by the endpoint: reading finds
    // the end (or a reset), not a timeout.
    let bound = HEADER_READ_TIMEOUT * 3;
    for mut stream in silent {
        let left = bound
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(100));
        stream.set_read_timeout(Some(left)).unwrap();
        let mut byte = [0u8; 1];
        match stream.read(&mut byte) {
            Ok(0) => {}
            Ok(n) => panic!("a silent connection got {n} bytes"),
            Err(e) => assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "a silent connection was still open after {:?}",
                started.elapsed()
            ),
        }
    }
}
