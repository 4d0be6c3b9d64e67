//! The bounded HTTP/1 server on loopback, with bounds of a few hundred
//! milliseconds: each request carries its peer's address; a request that
//! runs out of time gets 408 and is reported; a silent connection is
//! closed at the idle timeout and a long one at the end of its lifetime;
//! when full, the oldest idle connection makes room for a new one; at
//! shutdown, idle connections close at once and a request in progress is
//! cut after the grace period; every closure is reported with its reason.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::{Request, Response};
use netcode_metrics::http::{Event, HttpServer, Limits, Observer, Peer, WhenFull};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

/// What the server told, in words.
#[derive(Default)]
struct Told(Mutex<Vec<String>>);

impl Observer for Told {
    fn observe(&self, event: Event<'_>) {
        let said = match event {
            Event::Opened { .. } => "opened".to_owned(),
            Event::Evicted { .. } => "evicted".to_owned(),
            Event::Refused { .. } => "refused".to_owned(),
            Event::RequestTimedOut { .. } => "timed out".to_owned(),
            Event::Closed { closure, .. } => format!("closed: {closure:?}"),
            other => format!("{other:?}"),
        };
        self.0.lock().unwrap().push(said);
    }
}

impl Told {
    /// Waits until `said` has been told `times` times.
    async fn until(&self, said: &str, times: usize) {
        let started = Instant::now();
        while self.0.lock().unwrap().iter().filter(|s| *s == said).count() < times {
            assert!(
                started.elapsed() < LIMIT,
                "never told {said:?} {times} times: {:?}",
                self.0.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A running server: its address, what it told, and how to stop it.
struct Running {
    address: SocketAddr,
    told: Arc<Told>,
    stop: oneshot::Sender<()>,
    served: tokio::task::JoinHandle<()>,
}

/// The answer to every request: the peer the request carries, after
/// sleeping for as many milliseconds as its path says (`/250`).
async fn answer(request: Request<Incoming>) -> Response<String> {
    let wait: u64 = request.uri().path()[1..].parse().unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let peer = request.extensions().get::<Peer>().map(|Peer(peer)| *peer);
    Response::new(format!("{peer:?}"))
}

/// Serves [`answer`] within `limits` on a loopback port.
async fn serve(limits: Limits) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let told = Arc::new(Told::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let observer: Arc<dyn Observer> = told.clone();
    let server = HttpServer::new(listener, limits).with_observer(observer);
    let served = tokio::spawn(server.serve(answer, async {
        let _ = stopped.await;
    }));
    Running {
        address,
        told,
        stop,
        served,
    }
}

fn limits(max_connections: usize) -> Limits {
    Limits {
        header_read_timeout: Duration::from_secs(5),
        ..Limits::new(NonZeroUsize::new(max_connections).unwrap())
    }
}

/// Sends a `GET path` on `stream` and reads the answer up to its body's
/// end (the body is short and the connection kept alive, or closed);
/// what came before the connection was closed, if it was.
async fn get(stream: &mut TcpStream, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return String::new();
    }
    let mut answer = Vec::new();
    let mut buffer = [0; 1024];
    loop {
        let read = tokio::time::timeout(LIMIT, stream.read(&mut buffer))
            .await
            .expect("an answer in time")
            .unwrap_or(0);
        answer.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let whole = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
            head.lines()
                .find_map(|line| line.strip_prefix("content-length: "))
                .and_then(|length| length.trim().parse::<usize>().ok())
                .is_some_and(|length| body.len() >= length)
        });
        if read == 0 || whole {
            return text;
        }
    }
}

/// Waits until the server closes `stream`; how long that took.
async fn closed(stream: &mut TcpStream) -> Duration {
    let started = Instant::now();
    let mut rest = Vec::new();
    tokio::time::timeout(LIMIT, stream.read_to_end(&mut rest))
        .await
        .expect("closed in time")
        .ok();
    started.elapsed()
}

#[tokio::test]
async fn requests_carry_their_peer_and_late_answers_are_408() {
    let running = serve(Limits {
        request_timeout: Some(Duration::from_millis(200)),
        ..limits(4)
    })
    .await;
    let mut stream = TcpStream::connect(running.address).await.unwrap();
    let peer = stream.local_addr().unwrap();
    let answer = get(&mut stream, "/0").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(&format!("Some({peer})")), "{answer}");
    // Kept alive: the next request takes too long.
    let answer = get(&mut stream, "/2000").await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    closed(&mut stream).await;
    running.told.until("timed out", 1).await;
    running.told.until("closed: Ended", 1).await;
}

#[tokio::test]
async fn silent_connections_close_at_the_idle_timeout_and_all_at_their_lifetime() {
    let idle = Duration::from_millis(300);
    let running = serve(Limits {
        idle_timeout: Some(idle),
        connection_lifetime: Some(Duration::from_millis(900)),
        ..limits(4)
    })
    .await;
    let mut silent = TcpStream::connect(running.address).await.unwrap();
    let lived = closed(&mut silent).await;
    assert!(lived >= idle - Duration::from_millis(50), "{lived:?}");
    assert!(lived < idle + Duration::from_secs(2), "{lived:?}");
    running.told.until("closed: Idle", 1).await;

    // Busy all along (a request every 100 ms), yet closed at its lifetime.
    let mut busy = TcpStream::connect(running.address).await.unwrap();
    let started = Instant::now();
    loop {
        let answer = get(&mut busy, "/100").await;
        if !answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(started.elapsed() < LIMIT, "never closed");
    }
    let lived = started.elapsed();
    assert!(lived >= Duration::from_millis(850), "{lived:?}");
    running.told.until("closed: LifetimeOver", 1).await;
}

#[tokio::test]
async fn a_full_server_evicts_its_oldest_idle_connection() {
    let running = serve(Limits {
        when_full: WhenFull::EvictOldestIdle,
        ..limits(2)
    })
    .await;
    let mut oldest = TcpStream::connect(running.address).await.unwrap();
    running.told.until("opened", 1).await;
    let mut busy = TcpStream::connect(running.address).await.unwrap();
    running.told.until("opened", 2).await;
    // The second is mid-request when a third comes: the first, silent,
    // makes room.
    busy.write_all(b"GET /1000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut newest = TcpStream::connect(running.address).await.unwrap();
    closed(&mut oldest).await;
    running.told.until("evicted", 1).await;
    running.told.until("closed: Evicted", 1).await;
    assert!(get(&mut newest, "/0").await.starts_with("HTTP/1.1 200"));
    // Both held mid-request: a fourth is refused.
    newest
        .write_all(b"GET /1000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut refused = TcpStream::connect(running.address).await.unwrap();
    closed(&mut refused).await;
    running.told.until("refused", 1).await;
}

#[tokio::test]
async fn shutdown_closes_idle_connections_and_cuts_late_requests() {
    let running = serve(Limits {
        shutdown_grace: Duration::from_millis(200),
        ..limits(4)
    })
    .await;
    let mut idle = TcpStream::connect(running.address).await.unwrap();
    let mut late = TcpStream::connect(running.address).await.unwrap();
    late.write_all(b"GET /5000 HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    running.told.until("opened", 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    running.stop.send(()).unwrap();
    tokio::time::timeout(LIMIT, running.served)
        .await
        .expect("stopped in time")
        .unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(150), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    closed(&mut idle).await;
    closed(&mut late).await;
    running.told.until("CutAtShutdown { open: 1 }", 1).await;
    assert!(TcpStream::connect(running.address).await.is_err());
}
