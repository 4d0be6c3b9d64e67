//! The matcher program's metrics listener, scraped after known requests:
//! tokens by transport, refusals by reason, the request timeout (a body
//! that never comes gets 408), latencies and open connections move as
//! they should. Also the limits that held before the hardening still hold
//! (too many or too large headers: 431), and SIGTERM stops it cleanly.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{
    PROTOCOL_ID, Running, SECRET, ask, connect_from, http, metric, raw, shared_turn,
};

/// Every wait gives up after this long.
const LIMIT: Duration = Duration::from_secs(10);

fn loopback() -> IpAddr {
    IpAddr::V4(Ipv4Addr::LOCALHOST)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_count_what_happened() {
    let _turn = shared_turn().await;
    let browsers = "127.0.0.1:40002";
    let mut running = Running::start_with(
        "metrics",
        &[
            "127.0.0.1:40000".parse().unwrap(),
            browsers.parse().unwrap(),
        ],
        &[
            "--webtransport".into(),
            format!(
                "{browsers}=https://127.0.0.1:40003/netcode#hash={}",
                "ab".repeat(32)
            ),
            "--request-timeout".into(),
            "1".into(),
            "--metrics".into(),
            "127.0.0.1:0".into(),
        ],
    );
    let text = running.scrape();
    assert!(text.trim_end().ends_with("# EOF"), "{text}");
    for series in [
        "matcher_tokens_issued_total{transport=\"udp\"}",
        "matcher_tokens_issued_total{transport=\"webtransport\"}",
        "matcher_refusals_total{reason=\"unauthorized\"}",
        "matcher_limits_hit_total{limit=\"request_timeout\"}",
        "matcher_request_duration_seconds_count",
        "matcher_open_connections",
    ] {
        assert_eq!(metric(&text, series), 0.0, "{series}");
    }

    let url = running.url.clone();
    let requests = tokio::task::spawn_blocking(move || {
        let udp = format!(r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 1}}"#);
        let browser = format!(
            r#"{{"protocol_id": {PROTOCOL_ID}, "client_id": 2, "transport": "webtransport"}}"#
        );
        let mut statuses = Vec::new();
        for _ in 0..3 {
            statuses.push(ask(&url, &udp).status);
        }
        for _ in 0..2 {
            statuses.push(ask(&url, &browser).status);
        }
        for secret in ["Bearer wrong", "Basic x"] {
            statuses.push(http(&url, "POST", "/token", Some(secret), &udp).status);
        }
        statuses.push(ask(&url, "{").status);
        statuses.push(ask(&url, r#"{"protocol_id": 1, "client_id": 1}"#).status);
        statuses.push(http(&url, "GET", "/elsewhere", None, "").status);
        statuses.push(http(&url, "GET", "/token", None, "").status);
        statuses
    })
    .await
    .unwrap();
    assert_eq!(
        requests,
        [200, 200, 200, 200, 200, 401, 401, 400, 404, 404, 405]
    );

    // A body promised and never sent: 408 after the request timeout.
    let to = running.address();
    let mut stalled = connect_from(loopback(), to).await;
    stalled
        .write_all(
            format!(
                "POST /token HTTP/1.1\r\nHost: m\r\nAuthorization: Bearer {SECRET}\r\n\
                 Content-Length: 100\r\n\r\n{{\"protocol_id\""
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    let mut answer = vec![0; 512];
    let read = tokio::time::timeout(LIMIT, stalled.read(&mut answer))
        .await
        .expect("answered in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() >= Duration::from_millis(900), "{answer}");
    drop(stalled);

    // Too many headers, or too large a one: 431, from hyper, uncounted.
    let many: String = (0..1000).map(|n| format!("X-{n}: y\r\n")).collect();
    let large = format!("X-Large: {}\r\n", "a".repeat(1 << 20));
    for headers in [many, large] {
        let request =
            format!("GET /health HTTP/1.1\r\nHost: m\r\n{headers}Connection: close\r\n\r\n");
        let answer = raw(loopback(), to, request.as_bytes()).await;
        assert_eq!(answer.map(|a| a.status), Some(431));
    }

    // Three connections held open, counted as such.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from(loopback(), to).await);
    }
    let started = Instant::now();
    let text = loop {
        let text = running.scrape();
        if metric(&text, "matcher_open_connections") == 3.0 {
            break text;
        }
        assert!(started.elapsed() < LIMIT, "{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    for (series, value) in [
        ("matcher_tokens_issued_total{transport=\"udp\"}", 3.0),
        (
            "matcher_tokens_issued_total{transport=\"webtransport\"}",
            2.0,
        ),
        ("matcher_refusals_total{reason=\"unauthorized\"}", 2.0),
        ("matcher_refusals_total{reason=\"bad_request\"}", 1.0),
        ("matcher_refusals_total{reason=\"not_found\"}", 2.0),
        ("matcher_refusals_total{reason=\"method_not_allowed\"}", 1.0),
        ("matcher_refusals_total{reason=\"request_timeout\"}", 1.0),
        ("matcher_refusals_total{reason=\"rate_limited\"}", 0.0),
        ("matcher_limits_hit_total{limit=\"request_timeout\"}", 1.0),
        ("matcher_limits_hit_total{limit=\"connection_cap\"}", 0.0),
        ("matcher_request_duration_seconds_count", 12.0),
        // The 408 waited a second; every other answer came sooner.
        ("matcher_request_duration_seconds_bucket{le=\"0.5\"}", 11.0),
    ] {
        assert_eq!(metric(&text, series), value, "{series}: {text}");
    }
    assert!(metric(&text, "matcher_request_duration_seconds_sum") >= 0.9);
    assert!(metric(&text, "matcher_connections_accepted_total") >= 17.0);

    // SIGTERM: it stops, closing the idle connections, and says nothing
    // went wrong.
    let status = running.terminate(LIMIT).expect("stopped in time");
    assert!(status.success(), "{status:?}");
    for mut connection in held {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(LIMIT, connection.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "closed at shutdown");
    }
    let stderr = running.stop();
    assert!(stderr.contains("limit request_timeout:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
