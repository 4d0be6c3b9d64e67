//! The matcher program under a connection storm, over loopback: thousands
//! of connections that send nothing and hundreds that trickle a header
//! that never ends, beyond its connection cap, while a caller keeps asking
//! for tokens. The caller's every request gets its token within
//! [`LATENCY_BOUND`]; the silent connections are closed at the idle
//! timeout (or earlier, when newer connections take their place at the
//! cap) and the trickling ones at the header-read timeout; the metrics
//! and the log say so, the log in a few lines; and the memory the storm
//! took is bounded and not kept, storm after storm.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{PROTOCOL_ID, Running, connect_from, metric, raise_fd_limit, whole_turn};

/// The matcher's connection cap in this test.
const CAP: usize = 1500;
/// Connections that send nothing, per storm.
const SILENT: usize = 2000;
/// Connections that trickle a header, per storm.
const SLOW: usize = 300;
/// The idle timeout the matcher is given.
const IDLE_TIMEOUT: Duration = Duration::from_secs(2);
/// The header-read timeout the matcher is given.
const HEADER_TIMEOUT: Duration = Duration::from_secs(3);
/// How much later than its timeout a connection may be closed.
const CLOSE_SLACK: Duration = Duration::from_millis(1500);
/// How long each real request may take, storm or not.
const LATENCY_BOUND: Duration = Duration::from_secs(2);
/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);
/// How much more resident memory than before the first storm the matcher
/// may keep after it.
const KEPT_BOUND_KIB: u64 = 48 * 1024;
/// How much more the second storm may leave than the first: the
/// allocator's fragmentation moves it by a few MiB either way, while a
/// connection's read buffer kept after it closed would add 18 MiB
/// (8 KiB for each of 2,300 connections).
const GROWTH_BOUND_KIB: u64 = 16 * 1024;

/// The addresses the storm comes from.
fn attacker(n: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10 + (n % 8) as u8))
}

/// Holds a connection that sends nothing until the server closes it; how
/// long it lived, or `None` if it was still open after [`LIMIT`].
async fn hold_silent(mut stream: TcpStream, opened: Instant) -> Option<Duration> {
    let mut sink = Vec::new();
    tokio::time::timeout(LIMIT, stream.read_to_end(&mut sink))
        .await
        .ok()
        .map(|_| opened.elapsed())
}

/// Sends the start of a request, then a header line every 400 ms, never
/// ending it, until the server closes the connection; how long it lived,
/// or `None` if it was still open after [`LIMIT`].
async fn hold_slow(mut stream: TcpStream, opened: Instant) -> Option<Duration> {
    if stream
        .write_all(b"POST /token HTTP/1.1\r\nHost: matcher\r\n")
        .await
        .is_err()
    {
        return Some(opened.elapsed());
    }
    let give_up = tokio::time::Instant::from_std(opened + LIMIT);
    let mut buffer = [0; 256];
    loop {
        tokio::select! {
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return Some(opened.elapsed()),
                Ok(_) => {}
            },
            () = tokio::time::sleep(Duration::from_millis(400)) => {
                if stream.write_all(b"X-Slow: 1\r\n").await.is_err() {
                    return Some(opened.elapsed());
                }
            }
            () = tokio::time::sleep_until(give_up) => return None,
        }
    }
}

/// One real token request on a new connection: its status and latency,
/// or what went wrong.
fn real_request(url: &str, client_id: u64) -> Result<(u16, Duration), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(LIMIT))
        .build()
        .into();
    let started = Instant::now();
    let mut response = agent
        .post(&format!("{url}/token"))
        .header("Authorization", format!("Bearer {}", crate::common::SECRET))
        .content_type("application/json")
        .send(format!(
            r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": {client_id}}}"#
        ))
        .map_err(|e| e.to_string())?;
    let _ = response.body_mut().read_to_string();
    Ok((response.status().as_u16(), started.elapsed()))
}

/// What one storm showed.
struct Storm {
    /// How long each silent connection lived, in the order opened.
    silent: Vec<Option<Duration>>,
    /// How long each trickling connection lived.
    slow: Vec<Option<Duration>>,
    /// Each real request's outcome during the storm.
    requests: Vec<Result<(u16, Duration), String>>,
    /// The matcher's resident memory at the height of the storm, KiB.
    peak_kib: u64,
}

/// Raises a storm against `running` while a caller asks for tokens every
/// 100 ms; returns when every storm connection has been closed (or given
/// up on).
async fn storm(running: &Running) -> Storm {
    let stop = Arc::new(AtomicBool::new(false));
    let caller = {
        let (url, stop) = (running.url.clone(), Arc::clone(&stop));
        tokio::task::spawn_blocking(move || {
            let mut requests = Vec::new();
            let mut client_id = 1000;
            while !stop.load(Ordering::Relaxed) {
                requests.push(real_request(&url, client_id));
                client_id += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            requests
        })
    };
    let to = running.address();
    let mut silent = Vec::with_capacity(SILENT);
    for n in 0..SILENT {
        let stream = connect_from(attacker(n), to).await;
        silent.push(tokio::spawn(hold_silent(stream, Instant::now())));
    }
    let mut slow = Vec::with_capacity(SLOW);
    for n in 0..SLOW {
        let stream = connect_from(attacker(n), to).await;
        slow.push(tokio::spawn(hold_slow(stream, Instant::now())));
    }
    // The height of the storm: every connection is open or waiting for
    // its timeout.
    let mut peak_kib = 0;
    for _ in 0..5 {
        peak_kib = peak_kib.max(running.rss_kib());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut storm = Storm {
        silent: Vec::new(),
        slow: Vec::new(),
        requests: Vec::new(),
        peak_kib,
    };
    for holder in silent {
        storm.silent.push(holder.await.unwrap());
    }
    for holder in slow {
        storm.slow.push(holder.await.unwrap());
    }
    stop.store(true, Ordering::Relaxed);
    storm.requests = caller.await.unwrap();
    storm
}

/// Waits until the matcher counts no open connection.
async fn until_all_closed(running: &Running) {
    let started = Instant::now();
    loop {
        let text = running.scrape();
        if metric(&text, "matcher_open_connections") == 0.0 {
            return;
        }
        assert!(
            started.elapsed() < LIMIT,
            "connections still open: {}",
            metric(&text, "matcher_open_connections")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Checks what `storm` showed; the real requests' latencies, sorted.
fn check(storm: &Storm, before: &str, after: &str) -> Vec<Duration> {
    // The caller was never turned away nor kept waiting.
    assert!(
        storm.requests.len() >= 20,
        "{} requests",
        storm.requests.len()
    );
    let mut latencies = Vec::new();
    for outcome in &storm.requests {
        let (status, latency) = outcome.as_ref().expect("an answer");
        assert_eq!(*status, 200);
        assert!(*latency < LATENCY_BOUND, "a token took {latency:?}");
        latencies.push(*latency);
    }
    latencies.sort();

    // Trickling connections were held until the header-read timeout, and
    // closed then.
    for life in &storm.slow {
        let life = life.expect("a trickling connection was closed");
        assert!(
            life >= HEADER_TIMEOUT - Duration::from_millis(50)
                && life < HEADER_TIMEOUT + CLOSE_SLACK,
            "a trickling connection lived {life:?}"
        );
    }
    // Silent ones were closed at the idle timeout, but for those whose
    // place newer connections took at the cap: at least as many as the
    // storm went over the cap, at most that many plus the real requests.
    let mut made_room = 0;
    for life in &storm.silent {
        let life = life.expect("a silent connection was closed");
        assert!(
            life < IDLE_TIMEOUT + CLOSE_SLACK,
            "a silent connection lived {life:?}"
        );
        if life < IDLE_TIMEOUT - Duration::from_millis(50) {
            made_room += 1;
        }
    }
    let over = SILENT + SLOW - CAP;
    assert!(
        made_room >= over && made_room <= over + storm.requests.len(),
        "{made_room} silent connections closed early, {over} over the cap"
    );

    // The metrics agree.
    let moved = |series: &str| metric(after, series) - metric(before, series);
    assert_eq!(
        moved("matcher_limits_hit_total{limit=\"header_timeout\"}"),
        SLOW as f64
    );
    assert_eq!(
        moved("matcher_limits_hit_total{limit=\"idle_timeout\"}"),
        (SILENT - made_room) as f64
    );
    assert_eq!(
        moved("matcher_limits_hit_total{limit=\"connection_cap\"}"),
        made_room as f64
    );
    assert_eq!(
        moved("matcher_tokens_issued_total{transport=\"udp\"}"),
        storm.requests.len() as f64
    );
    assert_eq!(metric(after, "matcher_open_connections"), 0.0);
    latencies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_requests_get_through_a_connection_storm_and_memory_comes_back() {
    let _alone = whole_turn().await;
    let fd_limit = raise_fd_limit();
    assert!(
        fd_limit >= (SILENT + SLOW + 200) as u64,
        "this test needs {} open files, the hard limit is {fd_limit}",
        SILENT + SLOW + 200
    );
    let seconds = |d: Duration| format!("{}", d.as_secs_f64());
    let running = Running::start_with(
        "storm",
        &["127.0.0.1:40000".parse().unwrap()],
        &[
            "--max-connections".into(),
            CAP.to_string(),
            "--idle-timeout".into(),
            seconds(IDLE_TIMEOUT),
            "--header-read-timeout".into(),
            seconds(HEADER_TIMEOUT),
            "--limit-log-interval".into(),
            "60".into(),
            // The default, at twice the caller's rate.
            "--rate-per-source".into(),
            "20".into(),
            "--metrics".into(),
            "127.0.0.1:0".into(),
        ],
    );
    // Warm: a few tokens before measuring.
    for client_id in 0..5 {
        let (status, _) = real_request(&running.url, client_id).unwrap();
        assert_eq!(status, 200);
    }
    until_all_closed(&running).await;
    let rss_before = running.rss_kib();

    let mut after_storms = Vec::new();
    for round in 1..=2 {
        let before = running.scrape();
        let storm = storm(&running).await;
        until_all_closed(&running).await;
        let after = running.scrape();
        let latencies = check(&storm, &before, &after);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss_after = running.rss_kib();
        println!(
            "storm {round}: {} silent and {} trickling connections, cap {CAP}; \
             {} tokens during it, latency median {:?}, max {:?}; \
             matcher RSS before {rss_before} KiB, at the height {} KiB, after {rss_after} KiB",
            SILENT,
            SLOW,
            latencies.len(),
            latencies[latencies.len() / 2],
            latencies[latencies.len() - 1],
            storm.peak_kib
        );
        after_storms.push(rss_after);
    }
    assert!(
        after_storms[0] < rss_before + KEPT_BOUND_KIB,
        "RSS {rss_before} KiB before, {} KiB after the storm",
        after_storms[0]
    );
    assert!(
        after_storms[1] < after_storms[0] + GROWTH_BOUND_KIB,
        "RSS {} KiB after the first storm, {} KiB after the second",
        after_storms[0],
        after_storms[1]
    );

    // The log said which limits bit, in a few lines for thousands of bites.
    let stderr = running.stop();
    for limit in ["connection_cap", "idle_timeout", "header_timeout"] {
        assert!(
            stderr.contains(&format!("limit {limit}:")),
            "{limit}: {stderr}"
        );
    }
    assert!(stderr.lines().count() < 20, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
