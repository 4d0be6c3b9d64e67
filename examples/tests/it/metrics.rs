//! The servers' `--metrics ADDR`: the real server binaries on free ports,
//! a netcode client exchanging payloads with them, and `/metrics` scraped
//! over HTTP: the connection counted, the client's own series, datagrams
//! and bytes moved; 404 for any other path. Every wait is bounded.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::common::Program;
use netcode_examples::{PRIVATE_KEY, PROTOCOL_ID, is_payload, payload};
use netcode_std::proto::Key;
use netcode_std::{Client, ClientState, ConnectTokenBuilder};

/// The client id of the test's client.
const CLIENT_ID: u64 = 0x6d65_7472;

/// The longest any step may take.
const STEP_DEADLINE: Duration = Duration::from_secs(15);

/// A server binary started on free ports, with the addresses it printed.
struct Served {
    program: Program,
    server: SocketAddr,
    metrics_url: String,
}

/// Starts `binary` with `--metrics 127.0.0.1:0` on a free game port and
/// reads both addresses from its output.
fn start(name: &'static str, binary: &str) -> Served {
    let mut program = Program::start(
        name,
        binary,
        &["127.0.0.1:0", "--metrics", "127.0.0.1:0", "--seconds", "20"],
    );
    // The `metrics on` line comes first, then `listening on`.
    let metrics_line = program.line_with("metrics on ");
    let metrics_url = metrics_line
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        metrics_url.starts_with("http://127.0.0.1:")
            && metrics_url.ends_with("/metrics")
            && !metrics_url.contains(":0/"),
        "{metrics_line}"
    );
    let listening = program.line_with("listening on");
    let server: SocketAddr = listening
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {listening:?}"));
    Served {
        program,
        server,
        metrics_url,
    }
}

/// Status and body of a GET of `url`.
fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut answer = agent
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let body = answer.body_mut().read_to_string().unwrap();
    (answer.status().as_u16(), body)
}

/// Every sample of a scrape, by series.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            Some((series.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Connects a netcode client to `server` and exchanges payloads until
/// each side has `count` of the other's; returns the client, still
/// connected, and its slot.
fn connect_and_exchange(server: SocketAddr, count: usize) -> (Client, usize) {
    let key = Key::from_bytes(PRIVATE_KEY);
    let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, CLIENT_ID)
        .server_addresses([server])
        .generate()
        .unwrap();
    let mut client = Client::new("127.0.0.1:0").unwrap();
    client.connect(&token).unwrap();
    let payload = payload();
    let epoch = Instant::now();
    let (mut sent, mut received) = (0, 0);
    while sent < count || received < count {
        assert!(
            epoch.elapsed() < STEP_DEADLINE,
            "client stuck in {:?}: sent {sent}, received {received}",
            client.state()
        );
        client.update(epoch.elapsed().as_secs_f64());
        if client.state() == ClientState::Connected {
            if client.send_packet(&payload).is_ok() {
                sent += 1;
            }
            while let Some(packet) = client.receive_packet() {
                assert!(is_payload(packet.data()), "a wrong payload");
                received += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let index = client.client_index();
    (client, index)
}

/// Scrapes `url` until `ready` holds for its samples (figures are taken
/// each frame, so a scrape may predate the last exchange); returns the
/// last scrape.
fn scrape_until(url: &str, ready: impl Fn(&BTreeMap<String, f64>) -> bool) -> String {
    let start = Instant::now();
    loop {
        let (status, body) = get(url);
        assert_eq!(status, 200, "{body}");
        if ready(&samples(&body)) {
            return body;
        }
        assert!(start.elapsed() < STEP_DEADLINE, "never ready:\n{body}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What a scrape must show while the client is connected and has
/// exchanged `count` payloads each way.
fn check_connected_scrape(served: &Served, client_index: usize, count: usize) {
    let labels = format!("{{client_index=\"{client_index}\",client_id=\"{CLIENT_ID}\"}}");
    let received_bytes = format!("netcode_client_received_bytes{labels}");
    let text = scrape_until(&served.metrics_url, |s| {
        s.get(&received_bytes)
            .is_some_and(|b| *b >= (count * 1200) as f64)
    });
    let s = samples(&text);
    let value = |series: &str| {
        *s.get(series)
            .unwrap_or_else(|| panic!("no {series} in:\n{text}"))
    };
    assert_eq!(value("netcode_connections_accepted_total"), 1.0, "{text}");
    assert_eq!(value("netcode_clients_connected"), 1.0, "{text}");
    assert_eq!(value("netcode_max_clients"), 256.0, "{text}");
    // The payloads (1200 bytes each, more on the wire) went both ways.
    assert!(
        value(&format!("netcode_client_packets_received{labels}")) >= count as f64,
        "{text}"
    );
    assert!(
        value(&format!("netcode_client_sent_bytes{labels}")) >= (count * 1200) as f64,
        "{text}"
    );
    assert!(
        value("netcode_packets_received_total{packet_type=\"payload\"}") >= count as f64,
        "{text}"
    );
    // The handshake and the payloads passed through the sockets.
    assert!(
        value("netcode_datagrams_received_total") >= (count + 2) as f64,
        "{text}"
    );
    assert!(
        value("netcode_datagrams_sent_total") >= (count + 2) as f64,
        "{text}"
    );
    // No other client has series.
    let others: Vec<&String> = s
        .keys()
        .filter(|series| series.contains("client_index=") && !series.contains(&labels[1..]))
        .collect();
    assert!(others.is_empty(), "{others:?}");
}

/// After the client says goodbye, its series are gone and its leaving is
/// counted.
fn check_disconnected_scrape(served: &Served, mut client: Client) {
    client.disconnect();
    let text = scrape_until(&served.metrics_url, |s| {
        s.get("netcode_clients_connected") == Some(&0.0)
    });
    assert!(!text.contains("client_index="), "{text}");
    assert_eq!(
        samples(&text).get("netcode_connections_closed_total{reason=\"client_disconnect\"}"),
        Some(&1.0),
        "{text}"
    );
}

#[test]
fn server_exports_a_clients_traffic_and_forgets_it_when_it_leaves() {
    let served = start("server", env!("CARGO_BIN_EXE_netcode-server"));
    let (client, index) = connect_and_exchange(served.server, 10);
    check_connected_scrape(&served, index, 10);
    check_disconnected_scrape(&served, client);
    drop(served.program);
}

#[test]
fn mio_server_exports_a_clients_traffic_and_forgets_it_when_it_leaves() {
    let served = start("mio_server", env!("CARGO_BIN_EXE_netcode-mio-server"));
    let (client, index) = connect_and_exchange(served.server, 10);
    check_connected_scrape(&served, index, 10);
    check_disconnected_scrape(&served, client);
    drop(served.program);
}

#[test]
fn other_paths_are_not_found() {
    let served = start("server", env!("CARGO_BIN_EXE_netcode-server"));
    let base = served.metrics_url.trim_end_matches("/metrics");
    for path in ["/", "/index.html", "/metrics/extra", "/stats"] {
        let (status, body) = get(&format!("{base}{path}"));
        assert_eq!(status, 404, "{path}: {body}");
    }
    assert_eq!(get(&served.metrics_url).0, 200);
}

#[test]
fn metrics_are_off_unless_asked_for() {
    let mut program = Program::start(
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["127.0.0.1:0", "--seconds", "0.5"],
    );
    assert!(program.finish().code().is_some());
    assert!(
        !program.transcript().contains("metrics on"),
        "{}",
        program.transcript()
    );

    let mut bad = Program::start(
        "server",
        env!("CARGO_BIN_EXE_netcode-server"),
        &["127.0.0.1:0", "--metrics", "nowhere"],
    );
    assert_eq!(
        bad.finish().code(),
        Some(i32::from(netcode_examples::USAGE_ERROR))
    );
    assert!(
        bad.transcript().contains("--metrics"),
        "{}",
        bad.transcript()
    );
}
