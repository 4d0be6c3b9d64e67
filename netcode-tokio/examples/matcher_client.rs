//! A game client on tokio that gets its connect token from a `matcher`
//! token service (the workspace's `netcode-matcher`), then connects to a
//! server the token names, sends the 1200-byte reference payload (byte
//! i = i % 256) 60 times a second and checks every payload it receives:
//! the `server` example of `netcode-examples` sends it that same payload.
//!
//! ```text
//! cargo run -p netcode-tokio --example matcher_client -- --matcher URL --secret-file PATH [--seconds N] [--client-id N]
//! ```
//!
//! The token request is a blocking HTTP client (ureq) on tokio's blocking
//! pool, so the runtime's workers never wait on it; it gives up after 10
//! s. This example speaks plain `http://` only, to keep TLS out of this
//! library's development builds; the `netcode-examples` client also
//! speaks `https://`.
//!
//! Exits 0 only if it connected and a correct payload went each way (with
//! `--seconds N`, or when the connection ends), else prints one `error:`
//! line and exits 1; a wrong command line exits 2. Ctrl-C disconnects it
//! at once: the server gets disconnect packets.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_tokio::netcode_std::random_client_id;
use netcode_tokio::{CONNECT_TOKEN_BYTES, Client, ClientState, ConnectToken};
use tokio::time::{Instant, MissedTickBehavior};

/// The protocol id of the reference's examples, which the `server`
/// example and the quick start's matcher serve.
const PROTOCOL_ID: u64 = 0x1122_3344_5566_7788;

/// How long the token request may take in all.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// One frame: a payload goes out every 1/60 s.
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 60);

/// The size of the reference payload.
const PAYLOAD_BYTES: usize = 1200;

const USAGE: &str = "\
matcher_client: a tokio game client whose connect token comes from a matcher

usage: cargo run -p netcode-tokio --example matcher_client -- --matcher URL --secret-file PATH [--seconds N] [--client-id N]

options:
  --matcher URL       the matcher token service (http://HOST:PORT)
  --secret-file PATH  the file holding its bearer secret
  --seconds N         stop after N seconds (default: when the connection
                      ends, or on Ctrl-C)
  --client-id N       the client id, decimal or 0x hex (default: random)
  -h, --help          print this help
";

/// What the command line asks for.
#[derive(Debug, Clone)]
struct Options {
    matcher: String,
    secret_file: PathBuf,
    seconds: Option<f64>,
    client_id: Option<u64>,
}

/// Why the command line is not run.
#[derive(Debug)]
enum CommandLine {
    Help,
    Wrong(String),
}

/// Reads the command line (without the program name).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, CommandLine> {
    let (mut matcher, mut secret_file, mut seconds, mut client_id) = (None, None, None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(value.into())),
            _ => (arg, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| CommandLine::Wrong(format!("{name} needs a value")))
        };
        match name.as_str() {
            "-h" | "--help" => return Err(CommandLine::Help),
            "--matcher" => matcher = Some(value()?),
            "--secret-file" => secret_file = Some(PathBuf::from(value()?)),
            "--seconds" => {
                let text = value()?;
                match text.parse::<f64>() {
                    Ok(n) if n.is_finite() && n > 0.0 => seconds = Some(n),
                    _ => {
                        let why = format!("--seconds: {text:?} is not a positive number");
                        return Err(CommandLine::Wrong(why));
                    }
                }
            }
            "--client-id" => {
                let text = value()?;
                let parsed = match text.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => text.parse(),
                };
                let why = || format!("--client-id: {text:?} is not a 64-bit id");
                client_id = Some(parsed.map_err(|_| CommandLine::Wrong(why()))?);
            }
            _ => return Err(CommandLine::Wrong(format!("unexpected argument {name:?}"))),
        }
    }
    let missing = |what: &str| CommandLine::Wrong(format!("{what} is required"));
    Ok(Options {
        matcher: matcher.ok_or_else(|| missing("--matcher URL"))?,
        secret_file: secret_file.ok_or_else(|| missing("--secret-file PATH"))?,
        seconds,
        client_id,
    })
}

/// What the matcher gave: the token and what its public part says.
struct Fetched {
    bytes: [u8; CONNECT_TOKEN_BYTES],
    public: ConnectToken,
    expire_seconds: u64,
}

/// Asks the matcher at `url` for a token for `client_id`, presenting
/// `secret` (blocking: run it on the blocking pool).
fn fetch_token(url: &str, secret: &str, client_id: u64) -> Result<Fetched, String> {
    if !url.starts_with("http://") {
        return Err(format!(
            "matcher URL {url:?}: this example speaks plain http:// only"
        ));
    }
    let endpoint = format!("{}/token", url.trim_end_matches('/'));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(FETCH_TIMEOUT))
        .build()
        .into();
    let body = serde_json::json!({
        "protocol_id": format!("{PROTOCOL_ID:#x}"),
        "client_id": client_id.to_string(),
    })
    .to_string();
    let mut response = agent
        .post(&endpoint)
        .header("Authorization", format!("Bearer {secret}"))
        .content_type("application/json")
        .send(&body)
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => format!("the matcher at {endpoint} did not answer in time"),
            other => format!("cannot reach the matcher at {endpoint}: {other}"),
        })?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(|v| format!(" (retry after {v} s)"))
        .unwrap_or_default();
    let text = response
        .body_mut()
        .with_config()
        .limit(64 * 1024)
        .read_to_string()
        .map_err(|e| format!("reading the matcher's answer: {e}"))?;
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if status != 200 {
        let said = answer["error"].as_str().unwrap_or("");
        return Err(match status {
            401 => format!("the matcher refused the secret (401 Unauthorized): {said}"),
            429 => format!("the matcher is rate limiting us (429){retry_after}: {said}"),
            _ => format!("the matcher answered {status}{retry_after}: {said}"),
        });
    }
    let malformed = |why: &str| format!("malformed answer from the matcher: {why}");
    if answer["client_id"].as_u64() != Some(client_id) {
        return Err(malformed("not a token for our client id"));
    }
    let expire_seconds = answer["expire_seconds"]
        .as_u64()
        .ok_or_else(|| malformed("no expire_seconds"))?;
    let decoded = answer["connect_token"]
        .as_str()
        .and_then(|encoded| STANDARD.decode(encoded).ok())
        .ok_or_else(|| malformed("no base64 connect_token"))?;
    let bytes: [u8; CONNECT_TOKEN_BYTES] = decoded.try_into().map_err(|wrong: Vec<u8>| {
        malformed(&format!("a token of {} bytes, not 2048", wrong.len()))
    })?;
    let public = ConnectToken::read(&bytes).map_err(|e| malformed(&e.to_string()))?;
    Ok(Fetched {
        bytes,
        public,
        expire_seconds,
    })
}

/// What went each way.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    connected: bool,
    sent: u64,
    received: u64,
    wrong: u64,
}

/// Whether `data` is the reference payload.
fn is_payload(data: &[u8]) -> bool {
    data.len() == PAYLOAD_BYTES && data.iter().enumerate().all(|(i, b)| *b == i as u8)
}

/// Fetches a token, connects with it and exchanges payloads until
/// `seconds` pass, the connection ends, or `stop` completes; then
/// disconnects. The tally, and whether `stop` ended it.
async fn run(
    options: Options,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(Tally, bool), String> {
    let secret = std::fs::read_to_string(&options.secret_file)
        .map_err(|e| format!("cannot read {}: {e}", options.secret_file.display()))?
        .trim()
        .to_owned();
    let client_id = match options.client_id {
        Some(id) => id,
        None => random_client_id().map_err(|e| e.to_string())?,
    };
    println!(
        "asking {} for a token for client {client_id:016x}",
        options.matcher
    );
    let url = options.matcher.clone();
    let fetched = tokio::task::spawn_blocking(move || fetch_token(&url, &secret, client_id))
        .await
        .map_err(|e| e.to_string())??;
    let servers: Vec<String> = fetched
        .public
        .server_addresses
        .iter()
        .map(|a| a.to_string())
        .collect();
    println!(
        "token: expires in {} s, timeout {} s, servers {}",
        fetched.expire_seconds,
        fetched.public.timeout_seconds,
        servers.join(", ")
    );

    let mut client = match Client::new_dual("0.0.0.0", "::").await {
        Ok(client) => client,
        Err(_) => Client::new("0.0.0.0").await.map_err(|e| e.to_string())?,
    };
    client.connect(&fetched.bytes).map_err(|e| e.to_string())?;
    let deadline = options
        .seconds
        .map(|seconds| Instant::now() + Duration::from_secs_f64(seconds));
    let until_deadline = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stop, until_deadline);
    let mut tally = Tally::default();
    let mut stopped = false;
    tokio::select! {
        connected = client.connected() => match connected {
            Ok(()) => tally.connected = true,
            Err(state) => return Err(format!("no connection: {state}")),
        },
        () = &mut until_deadline => return Err("no connection within --seconds".into()),
        () = &mut stop => stopped = true,
    }
    if tally.connected {
        println!(
            "connected to {} as client {} of {}",
            client
                .server_address()
                .map_or("?".into(), |a| a.to_string()),
            client.client_index(),
            client.max_clients()
        );
    }

    let payload: Vec<u8> = (0..PAYLOAD_BYTES).map(|i| i as u8).collect();
    let mut frames = tokio::time::interval(FRAME);
    frames.set_missed_tick_behavior(MissedTickBehavior::Delay);
    while !stopped {
        tokio::select! {
            _ = frames.tick() => {
                if client.state() == ClientState::Connected && client.send_packet(&payload).is_ok() {
                    tally.sent += 1;
                }
            }
            packet = client.recv() => match packet {
                Some(packet) => {
                    if is_payload(packet.data()) {
                        tally.received += 1;
                    } else {
                        tally.wrong += 1;
                    }
                    client.free_packet(packet);
                }
                None => {
                    println!("connection ended: {}", client.state());
                    break;
                }
            },
            () = &mut until_deadline => break,
            () = &mut stop => stopped = true,
        }
    }
    client.disconnect();
    println!(
        "sent {} payloads, received {} correct and {} wrong",
        tally.sent, tally.received, tally.wrong
    );
    Ok((tally, stopped))
}

/// Success if a connection was made and a correct payload went each way
/// with none wrong; an interrupted open-ended run only needs none wrong.
fn verdict(tally: &Tally, interrupted: bool, limited: bool) -> Result<(), String> {
    if tally.wrong > 0 {
        return Err(format!("{} payloads had the wrong content", tally.wrong));
    }
    if interrupted && !limited {
        return Ok(());
    }
    match (tally.connected, tally.sent, tally.received) {
        (false, _, _) => Err("no connection was made".into()),
        (true, 0, _) => Err("connected, but no payload was sent".into()),
        (true, _, 0) => Err("connected, but no payload was received".into()),
        _ => Ok(()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(CommandLine::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(CommandLine::Wrong(why)) => {
            eprintln!("error: {why} (--help lists the arguments)");
            return ExitCode::from(2);
        }
    };
    let limited = options.seconds.is_some();
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let result = run(options, ctrl_c)
        .await
        .and_then(|(tally, interrupted)| verdict(&tally, interrupted, limited));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("error: {why}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    //! The example against a stub matcher on loopback whose token names a
    //! netcode-tokio server in the same test, which sends the reference
    //! payload back for each it receives.

    use std::io::{Read, Write};
    use std::net::TcpListener;

    use netcode_tokio::{ConnectTokenBuilder, Key, Server, ServerConfig};

    use super::*;

    /// The stub's bearer secret.
    const SECRET: &str = "stub secret";

    /// Serves one HTTP exchange on a free loopback port: the answer is a
    /// token for `server` when the request carries [`SECRET`], 401
    /// otherwise. Returns the matcher URL.
    fn stub_matcher(key: Key, server: std::net::SocketAddr, client_id: u64) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // The request is small: read until its JSON body has closed.
            while !request.ends_with(b"}") {
                match stream.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request).to_lowercase();
            let (status, body) = if request.contains(&format!("bearer {SECRET}")) {
                let token = ConnectTokenBuilder::new(PROTOCOL_ID, &key, client_id)
                    .server_addresses([server])
                    .generate()
                    .unwrap();
                let body = format!(
                    r#"{{"connect_token": "{}", "client_id": {client_id}, "expire_seconds": 30}}"#,
                    STANDARD.encode(token)
                );
                ("200 OK", body)
            } else {
                let body = r#"{"error": "a bearer secret is required"}"#.to_owned();
                ("401 Unauthorized", body)
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(answer.as_bytes()).unwrap();
        });
        url
    }

    /// A secret file holding `secret`, for test `name`.
    fn secret_file(name: &str, secret: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "netcode-tokio-matcher-client-{name}-{}",
            std::process::id()
        ));
        std::fs::write(&path, format!("{secret}\n")).unwrap();
        path
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fetches_connects_and_exchanges_payloads() {
        let key = Key::from_bytes([0x5a; 32]);
        let mut server = Server::new("127.0.0.1:0", ServerConfig::new(PROTOCOL_ID, key.clone()))
            .await
            .unwrap();
        server.start(4).await.unwrap();
        let address = server.public_address();
        let echo = tokio::spawn(async move {
            loop {
                server.turn().await;
                while let Some((index, packet)) = server.receive_any() {
                    let _ = server.send_packet(index, packet.data());
                    server.free_packet(packet);
                }
            }
        });
        let secret = secret_file("good", SECRET);
        let options = Options {
            matcher: stub_matcher(key, address, 7),
            secret_file: secret.clone(),
            seconds: Some(1.0),
            client_id: Some(7),
        };
        let (tally, interrupted) = run(options, std::future::pending()).await.unwrap();
        echo.abort();
        let _ = std::fs::remove_file(secret);
        assert!(!interrupted);
        assert!(tally.connected, "{tally:?}");
        assert!(tally.sent > 0 && tally.received > 0, "{tally:?}");
        assert_eq!(tally.wrong, 0, "{tally:?}");
        assert!(verdict(&tally, false, true).is_ok());
    }

    #[tokio::test]
    async fn a_wrong_secret_is_reported() {
        let secret = secret_file("wrong", "not it");
        let options = Options {
            matcher: stub_matcher(Key::from_bytes([1; 32]), "127.0.0.1:9".parse().unwrap(), 7),
            secret_file: secret.clone(),
            seconds: Some(1.0),
            client_id: Some(7),
        };
        let error = run(options, std::future::pending()).await.unwrap_err();
        let _ = std::fs::remove_file(secret);
        assert!(
            error.starts_with("the matcher refused the secret (401 Unauthorized)"),
            "{error}"
        );
    }

    #[test]
    fn the_command_line_is_read() {
        let args = |list: &[&str]| parse(list.iter().map(|s| s.to_string()));
        let options = args(&[
            "--matcher",
            "http://127.0.0.1:8080",
            "--secret-file=s",
            "--seconds",
            "2.5",
            "--client-id",
            "0x2a",
        ])
        .unwrap();
        assert_eq!(options.matcher, "http://127.0.0.1:8080");
        assert_eq!(options.secret_file, PathBuf::from("s"));
        assert_eq!((options.seconds, options.client_id), (Some(2.5), Some(42)));
        assert!(matches!(args(&["--help"]), Err(CommandLine::Help)));
        for wrong in [
            &["--secret-file", "s"][..],
            &["--matcher", "http://h"],
            &[
                "--matcher",
                "http://h",
                "--secret-file",
                "s",
                "--seconds",
                "0",
            ],
            &["--matcher"],
            &["--frobnicate"],
        ] {
            assert!(
                matches!(args(wrong), Err(CommandLine::Wrong(_))),
                "{wrong:?}"
            );
        }
    }
}
