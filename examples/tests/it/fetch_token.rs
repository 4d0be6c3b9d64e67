//! `netcode_examples::matcher::fetch_token` against a stub matcher on
//! loopback that gives one canned HTTP answer: a good answer is decoded
//! and the request carried the secret and ids; each status maps to its
//! typed error with the matcher's words; malformed answers and tokens are
//! refused; nothing listening and a matcher that never answers are told
//! apart. Also how a secret file is read.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use netcode_examples::matcher::{
    FetchError, FetchedToken, fetch_token, fetch_token_within, read_secret_file,
};
use netcode_examples::{PRIVATE_KEY, PROTOCOL_ID};
use netcode_std::ConnectTokenBuilder;
use netcode_std::proto::Key;

/// The secret the tests present.
const SECRET: &str = "s3cret token";

/// The client id the tests ask for.
const CLIENT_ID: u64 = 42;

/// No stub waits longer than this for its caller.
const LIMIT: Duration = Duration::from_secs(10);

/// A stub matcher: answers its first connection with a canned answer and
/// reports the request it read.
struct Stub {
    url: String,
    request: Receiver<String>,
    thread: Option<JoinHandle<()>>,
}

impl Stub {
    /// Listens on a free loopback port; answers with `answer`, or holds
    /// the connection open without answering while `answer` is `None`
    /// (until the caller hangs up or [`LIMIT`] passes).
    fn start(answer: Option<String>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let (report, request) = channel();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut stream = loop {
                match listener.accept() {
                    Ok((stream, _)) => break stream,
                    Err(_) if start.elapsed() < LIMIT => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => return,
                }
            };
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(LIMIT)).unwrap();
            let _ = report.send(read_request(&mut stream));
            match answer {
                Some(answer) => {
                    let _ = stream.write_all(answer.as_bytes());
                }
                None => {
                    // Silent: wait for the caller to give up and hang up.
                    let _ = stream.read(&mut [0u8; 1]);
                }
            }
        });
        Self {
            url,
            request,
            thread: Some(thread),
        }
    }

    /// The request the stub read.
    fn request(&self) -> String {
        self.request.recv_timeout(LIMIT).expect("a request")
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One HTTP request: the head, then as many body bytes as its
/// Content-Length says.
fn read_request(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return text;
            }
        }
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&bytes).into_owned(),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
        }
    }
}

/// An HTTP answer with `status`, extra `headers` and `body`.
fn answer(status: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut text = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// A JSON answer with `status`, extra `headers` and `body`.
fn json(status: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    answer(status, &all, body)
}

/// A real token for [`CLIENT_ID`] listing `server`, sealed for
/// `protocol_id`.
fn token(protocol_id: u64, server: SocketAddr) -> [u8; 2048] {
    ConnectTokenBuilder::new(protocol_id, &Key::from_bytes(PRIVATE_KEY), CLIENT_ID)
        .server_addresses([server])
        .expire_seconds(30)
        .timeout_seconds(5)
        .generate()
        .unwrap()
}

/// The matcher's 200 answer carrying `token_bytes` for `client_id`.
fn token_answer(token_bytes: &[u8], client_id: u64) -> String {
    json(
        "200 OK",
        &[],
        &format!(
            r#"{{"connect_token": "{}", "client_id": {client_id}, "expire_seconds": 30}}"#,
            STANDARD.encode(token_bytes)
        ),
    )
}

/// What fetching from a stub giving `answer` returns.
fn fetch_from(answer: String) -> Result<FetchedToken, FetchError> {
    let stub = Stub::start(Some(answer));
    fetch_token(&stub.url, SECRET, PROTOCOL_ID, CLIENT_ID)
}

#[test]
fn a_token_answer_is_decoded_and_the_request_carries_secret_and_ids() {
    let server: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let sent = token(PROTOCOL_ID, server);
    let stub = Stub::start(Some(token_answer(&sent, CLIENT_ID)));
    let fetched =
        fetch_token(&format!("{}/", stub.url), SECRET, PROTOCOL_ID, CLIENT_ID).expect("a token");
    assert_eq!(fetched.client_id, CLIENT_ID);
    assert_eq!(fetched.expire_seconds, 30);
    assert_eq!(fetched.bytes, sent);
    assert_eq!(fetched.servers(), [server]);
    assert_eq!(fetched.public.protocol_id, PROTOCOL_ID);
    assert_eq!(fetched.public.timeout_seconds, 5);

    let request = stub.request();
    let (head, body) = request.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("POST /token HTTP/1.1\r\n"), "{head}");
    let has = |name: &str, value: &str| {
        head.lines().any(|line| {
            line.split_once(':')
                .is_some_and(|(n, v)| n.eq_ignore_ascii_case(name) && v.trim() == value)
        })
    };
    assert!(has("authorization", &format!("Bearer {SECRET}")), "{head}");
    assert!(has("content-type", "application/json"), "{head}");
    let asked: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(asked["protocol_id"], "0x1122334455667788", "{body}");
    assert_eq!(asked["client_id"], CLIENT_ID.to_string(), "{body}");
}

#[test]
fn a_wrong_secret_is_told_as_such() {
    let refused = fetch_from(json(
        "401 Unauthorized",
        &[("www-authenticate", "Bearer")],
        r#"{"error": "a bearer secret is required"}"#,
    ))
    .unwrap_err();
    match &refused {
        FetchError::WrongSecret { message } => {
            assert_eq!(message, "a bearer secret is required")
        }
        other => panic!("not WrongSecret: {other:?}"),
    }
    let text = refused.to_string();
    assert!(text.contains("401") && text.contains("secret"), "{text}");
}

#[test]
fn rate_limits_and_other_statuses_carry_the_wait_and_the_words() {
    let limited = fetch_from(json(
        "429 Too Many Requests",
        &[("retry-after", "7")],
        r#"{"error": "too many requests from this address"}"#,
    ))
    .unwrap_err();
    match &limited {
        FetchError::RateLimited {
            retry_after,
            message,
        } => {
            assert_eq!(*retry_after, Some(Duration::from_secs(7)));
            assert_eq!(message, "too many requests from this address");
        }
        other => panic!("not RateLimited: {other:?}"),
    }
    let text = limited.to_string();
    assert!(
        text.contains("429") && text.contains("retry after 7 s"),
        "{text}"
    );

    let unavailable = fetch_from(json(
        "503 Service Unavailable",
        &[("retry-after", "2")],
        r#"{"error": "no server has a free slot"}"#,
    ))
    .unwrap_err();
    match &unavailable {
        FetchError::Status {
            status: 503,
            message,
            retry_after: Some(wait),
        } => {
            assert_eq!(message, "no server has a free slot");
            assert_eq!(*wait, Duration::from_secs(2));
        }
        other => panic!("not a 503 with a wait: {other:?}"),
    }

    let unknown = fetch_from(answer(
        "404 Not Found",
        &[("content-type", "text/plain")],
        "no such\nroute",
    ))
    .unwrap_err();
    match &unknown {
        FetchError::Status {
            status: 404,
            message,
            retry_after: None,
        } => assert_eq!(message, "no such route"),
        other => panic!("not a plain 404: {other:?}"),
    }
    assert!(
        unknown.to_string().contains("404: no such route"),
        "{unknown}"
    );

    let moved = fetch_from(answer(
        "301 Moved Permanently",
        &[("location", "https://elsewhere.example/token")],
        "",
    ))
    .unwrap_err();
    match &moved {
        FetchError::Status {
            status: 301,
            message,
            ..
        } => assert!(
            message.contains("redirects to https://elsewhere.example/token"),
            "{message}"
        ),
        other => panic!("not a 301: {other:?}"),
    }
}

#[test]
fn malformed_answers_and_tokens_are_refused() {
    let server: SocketAddr = "127.0.0.1:40000".parse().unwrap();
    let malformed = |answer: String, needle: &str| match fetch_from(answer) {
        Err(FetchError::MalformedAnswer(why)) => assert!(why.contains(needle), "{why}"),
        other => panic!("not MalformedAnswer ({needle}): {other:?}"),
    };
    malformed(json("200 OK", &[], "<html>"), "not JSON");
    malformed(
        json("200 OK", &[], r#"{"client_id": 42, "expire_seconds": 30}"#),
        "connect_token",
    );
    malformed(
        json(
            "200 OK",
            &[],
            r#"{"connect_token": "!!!", "client_id": 42, "expire_seconds": 30}"#,
        ),
        "base64",
    );
    malformed(
        token_answer(&token(PROTOCOL_ID, server), CLIENT_ID + 1),
        "client id 43, not 42",
    );

    match fetch_from(token_answer(&[7u8; 100], CLIENT_ID)) {
        Err(FetchError::WrongTokenLength(100)) => {}
        other => panic!("not WrongTokenLength(100): {other:?}"),
    }
    match fetch_from(token_answer(&[0u8; 2048], CLIENT_ID)) {
        Err(FetchError::UnreadableToken(why)) => assert!(why.contains("version"), "{why}"),
        other => panic!("not UnreadableToken: {other:?}"),
    }
    match fetch_from(token_answer(&token(PROTOCOL_ID + 1, server), CLIENT_ID)) {
        Err(FetchError::UnreadableToken(why)) => assert!(why.contains("protocol id"), "{why}"),
        other => panic!("not UnreadableToken for the protocol: {other:?}"),
    }
}

#[test]
fn nothing_listening_and_no_answer_are_told_apart() {
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let down =
        fetch_token(&format!("http://{closed}"), SECRET, PROTOCOL_ID, CLIENT_ID).unwrap_err();
    match &down {
        FetchError::Unreachable { url, reason } => {
            assert_eq!(url, &format!("http://{closed}/token"));
            assert!(reason.contains("connection refused"), "{reason}");
        }
        other => panic!("not Unreachable: {other:?}"),
    }
    assert!(
        down.to_string().contains("cannot reach the matcher"),
        "{down}"
    );

    let silent = Stub::start(None);
    let timeout = Duration::from_millis(300);
    match fetch_token_within(&silent.url, SECRET, PROTOCOL_ID, CLIENT_ID, timeout) {
        Err(FetchError::TimedOut { url, after }) => {
            assert_eq!(url, format!("{}/token", silent.url));
            assert_eq!(after, timeout);
        }
        other => panic!("not TimedOut: {other:?}"),
    }
    // The stub did get the request: the silence was the matcher's.
    assert!(silent.request().starts_with("POST /token"));
}

#[test]
fn urls_that_are_not_http_are_refused_before_any_request() {
    for url in ["127.0.0.1:8080", "ftp://127.0.0.1/", "http://", "not a url"] {
        match fetch_token(url, SECRET, PROTOCOL_ID, CLIENT_ID) {
            Err(FetchError::BadUrl { url: given, .. }) => assert_eq!(given, url),
            other => panic!("{url:?}: not BadUrl: {other:?}"),
        }
    }
}

#[test]
fn secret_files_are_trimmed_and_checked() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("secret-files");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    assert_eq!(
        read_secret_file(&file("padded", "  s3cret token \n")).unwrap(),
        "s3cret token"
    );
    let empty = read_secret_file(&file("empty", " \n\n")).unwrap_err();
    assert!(empty.contains("is empty"), "{empty}");
    let broken = read_secret_file(&file("two-lines", "first\nsecond\n")).unwrap_err();
    assert!(broken.contains("control characters"), "{broken}");
    let missing = read_secret_file(&dir.join("no-such-file")).unwrap_err();
    assert!(
        missing.starts_with("cannot read the secret file"),
        "{missing}"
    );
}
