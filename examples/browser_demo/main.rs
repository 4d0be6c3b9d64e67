//! A netcode server for UDP clients and browsers at once: the `server`
//! example's protocol id, key and payloads on UDP, plus a WebTransport
//! endpoint, plus a web page (HTTP) whose wasm client joins over
//! WebTransport. `USAGE`, which `--help` prints, says what it does.

mod status;
mod web;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lexopt::Parser;
use netcode_examples::{
    CommandLineError, FRAME, PRIVATE_KEY, PROTOCOL_ID, SERVER_ADDRESS, describe, payload,
    run_program, unexpected, value,
};
use netcode_tokio::proto::Key;
use netcode_tokio::{Incoming, Server, ServerConfig, ServerEvent};
use netcode_webtransport::{WebSocket, WebSocketConfig, WebTransport, WebTransportConfig};

use status::Status;

/// Slots, as the `server` example has.
const MAX_CLIENTS: usize = 256;

/// What `--help` prints.
const USAGE: &str = "\
browser_demo: one netcode server for UDP clients and browser tabs

usage: cargo run --release -p netcode-examples --example browser_demo -- [options]

Runs a netcode server with the `server` example's protocol id
(0x1122334455667788) and test key on UDP, so the C reference's client
(or the `client` example) joins as usual, and a WebTransport endpoint on
which browser tabs join the same server, in the same slots. Serves a page
over HTTP that fetches a token, connects its wasm client on load, sends
payloads of every size its session carries (byte i = i % 256), checks the
server's 1200-byte payloads, and shows what happens. The first line of
output is `open http://ADDRESS/`.

The page's wasm client must be built first (once):
  bash netcode-browser/build-web.sh target/browser-pkg

HTTP:
  GET /          the page
  GET /token     a connect token for a browser, with the WebTransport URL
                 and certificate hash and the WebSocket URL (the page
                 falls back on it when WebTransport does not open within
                 3 s; ?transport=websocket on the page's address takes it
                 at once) (?kind=expired or ?kind=foreign: a
                 token the server must refuse, to see what that looks like)
  GET /status    JSON: {\"clients\": [{\"slot\", \"client_id\", \"transport\":
                 \"udp\" | \"webtransport\" | \"websocket\", \"intact\",
                 \"wrong\"}], ...}:
                 payloads received from each client, checked
  POST /report   what a page saw (shown in /status under \"pages\")

options:
  --udp ADDRESS           UDP address (default 127.0.0.1:40000)
  --webtransport ADDRESS  WebTransport (QUIC) address (default 127.0.0.1:40001)
  --websocket ADDRESS     WebSocket (TCP, plain ws://) address, the fallback
                          (default 127.0.0.1:40002)
  --http ADDRESS          HTTP address (default 127.0.0.1:8080)
  --token-history FILE    keep the server's connect token history in FILE, so
                          that a restarted demo refuses every token it saw
                          (and admits fresh ones at once)
  --web DIR               the built wasm client (default target/browser-pkg
                          of this workspace)
  --seconds N             stop after N seconds; exit 1 if a payload was
                          wrong (default: run until Ctrl-C)
  -h, --help              print this help
";

/// The command line.
#[derive(Debug, Clone)]
struct Options {
    udp: SocketAddr,
    webtransport: SocketAddr,
    websocket: SocketAddr,
    http: SocketAddr,
    web: PathBuf,
    token_history: Option<PathBuf>,
    seconds: Option<f64>,
}

pub(crate) fn main() -> ExitCode {
    run_program(USAGE, parse_args, run)
}

fn parse_args(parser: &mut Parser) -> Result<Options, CommandLineError> {
    let address = |text: &str| text.parse().expect("a valid default address");
    let mut options = Options {
        udp: address(SERVER_ADDRESS),
        webtransport: address("127.0.0.1:40001"),
        websocket: address("127.0.0.1:40002"),
        http: address("127.0.0.1:8080"),
        web: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/browser-pkg"
        )),
        token_history: None,
        seconds: None,
    };
    while let Some(arg) = parser.next()? {
        match arg {
            lexopt::Arg::Long("udp") => options.udp = value(parser, "--udp", "an address")?,
            lexopt::Arg::Long("webtransport") => {
                options.webtransport = value(parser, "--webtransport", "an address")?;
            }
            lexopt::Arg::Long("websocket") => {
                options.websocket = value(parser, "--websocket", "an address")?;
            }
            lexopt::Arg::Long("http") => options.http = value(parser, "--http", "an address")?,
            lexopt::Arg::Long("web") => options.web = value(parser, "--web", "a directory")?,
            lexopt::Arg::Long("token-history") => {
                options.token_history = Some(value(parser, "--token-history", "a file")?);
            }
            lexopt::Arg::Long("seconds") => {
                let seconds: f64 = value(parser, "--seconds", "a number of seconds")?;
                if !(seconds.is_finite() && seconds > 0.0) {
                    return Err(format!("--seconds: {seconds} is not a positive number").into());
                }
                options.seconds = Some(seconds);
            }
            other => return Err(unexpected(other)),
        }
    }
    Ok(options)
}

fn run(options: Options) -> Result<(), String> {
    web::check_client_built(&options.web)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("no tokio runtime: {e}"))?;
    runtime.block_on(serve(options))
}

async fn serve(options: Options) -> Result<(), String> {
    let key = Key::from_bytes(PRIVATE_KEY);
    let mut config = ServerConfig::new(PROTOCOL_ID, key.clone());
    config.token_history_file = options.token_history.clone();
    let mut server = Server::new(options.udp, config)
        .await
        .map_err(|e| format!("UDP on {}: {e}", options.udp))?;
    let host = options.webtransport.ip().to_string();
    let endpoint = WebTransport::bind(WebTransportConfig::self_signed(
        options.webtransport,
        &[host.as_str(), "localhost"],
    ))
    .await
    .map_err(|e| format!("WebTransport on {}: {e}", options.webtransport))?;
    let fallback = WebSocket::bind_beside(WebSocketConfig::new(options.websocket), &endpoint)
        .await
        .map_err(|e| format!("WebSocket on {}: {e}", options.websocket))?;
    endpoint.attach(&mut server);
    server
        .start(MAX_CLIENTS)
        .await
        .map_err(|e| format!("start: {e}"))?;
    let udp = server.public_address();
    let endpoint = Arc::new(endpoint);
    let status = Arc::new(Mutex::new(Status::default()));
    let listener = tokio::net::TcpListener::bind(options.http)
        .await
        .map_err(|e| format!("HTTP on {}: {e}", options.http))?;
    let http = listener.local_addr().map_err(|e| e.to_string())?;
    println!("open http://{http}/");
    println!(
        "udp {udp}, webtransport {}, websocket {}",
        endpoint.url(&host),
        fallback.url(&host)
    );
    flush();
    let app = web::router(web::Shared {
        endpoint: Arc::clone(&endpoint),
        websocket_url: fallback.url(&host),
        host,
        udp,
        key,
        status: Arc::clone(&status),
        web: options.web.clone(),
    });
    let http_task = tokio::spawn(async move { axum::serve(listener, app).await });

    let stop = async {
        match options.seconds {
            Some(seconds) => tokio::time::sleep(Duration::from_secs_f64(seconds)).await,
            None => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    tokio::pin!(stop);
    let mut frame = tokio::time::interval(FRAME);
    let reference = payload();
    loop {
        tokio::select! {
            () = &mut stop => break,
            _ = frame.tick() => {
                for slot in 0..MAX_CLIENTS {
                    if server.client_connected(slot) {
                        // A browser's QUIC may take smaller datagrams than
                        // netcode's (Firefox): as much as reaches it.
                        let reach = server
                            .client_address(slot)
                            .and_then(|peer| endpoint.payload_limit_to(peer))
                            .unwrap_or(reference.len());
                        let _ = server.send_packet(slot, &reference[..reach.min(reference.len())]);
                    }
                }
            }
            incoming = server.next() => match incoming {
                Incoming::Payload { client_index, packet } => {
                    status::lock(&status).check(client_index, packet.data());
                    server.free_packet(packet);
                }
                Incoming::Event(event) => {
                    let browser = match event {
                        ServerEvent::ClientConnected { address: Some(peer), .. } => endpoint.relay().transport_of(peer),
                        _ => None,
                    };
                    println!("{}", status::lock(&status).apply(&event, browser).unwrap_or_else(|| describe(&event)));
                    flush();
                }
            },
        }
    }
    server.disconnect_all_clients();
    http_task.abort();
    let status = status::lock(&status);
    println!("{}", status.summary());
    status.verdict()
}

fn flush() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
}
