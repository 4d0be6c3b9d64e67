//! The matcher program's rate limits, over loopback from several source
//! addresses: a flood from one address gets 429 with `Retry-After` once
//! its burst is spent, while the requests within the limit pass, other
//! addresses are served as usual, and the flooder is served again after
//! waiting as told; the secret's own limit holds however many addresses
//! share the flood, and does not touch callers without the secret. The
//! metrics count each refusal and the log reports them in a few lines.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use crate::common::{RawAnswer, Running, SECRET, metric, raw, shared_turn, token_request};

/// Loopback address `127.0.0.n`.
fn source(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A token request from `from`, with `secret`.
async fn ask_from(from: IpAddr, to: SocketAddr, secret: &str) -> RawAnswer {
    raw(from, to, &token_request(secret, 7))
        .await
        .expect("an answer")
}

/// Checks a 429: it says when to come back, in whole seconds; returns that.
fn retry_after(answer: &RawAnswer) -> u64 {
    assert_eq!(answer.status, 429, "{answer:?}");
    let json: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
    assert!(json["error"].is_string(), "{answer:?}");
    let seconds: u64 = answer
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("whole seconds");
    assert!((1..=5).contains(&seconds), "{answer:?}");
    seconds
}

/// Sends `count` token requests with `secret` as fast as answers come,
/// from the `sources` in turn; the answers, and how long it took.
async fn flood(
    to: SocketAddr,
    sources: &[IpAddr],
    secret: &str,
    count: usize,
) -> (Vec<RawAnswer>, Duration) {
    let started = Instant::now();
    let mut answers = Vec::new();
    for n in 0..count {
        answers.push(ask_from(sources[n % sources.len()], to, secret).await);
    }
    (answers, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_from_one_address_is_limited_and_starves_no_one_else() {
    let _turn = shared_turn().await;
    const RATE: f64 = 1.0;
    const BURST: usize = 10;
    const FLOOD: usize = 80;
    let running = Running::start_with(
        "rate-source",
        &["127.0.0.1:40000".parse().unwrap()],
        &[
            "--rate-per-source".into(),
            "1".into(),
            "--burst-per-source".into(),
            BURST.to_string(),
            "--metrics".into(),
            "127.0.0.1:0".into(),
        ],
    );
    let to = running.address();
    let (flooder, other) = (source(20), source(21));
    let (answers, took) = flood(to, &[flooder], SECRET, FLOOD).await;
    let served = answers.iter().filter(|a| a.status == 200).count();
    let refused: Vec<&RawAnswer> = answers.iter().filter(|a| a.status != 200).collect();
    // The burst passes, and no more than the rate allows on top of it.
    let allowed = BURST + (RATE * took.as_secs_f64()).ceil() as usize;
    assert!(
        served >= BURST && served <= allowed,
        "{served} served in {took:?}, at most {allowed} allowed"
    );
    assert!(answers[..BURST].iter().all(|a| a.status == 200));
    assert_eq!(served + refused.len(), FLOOD);
    for answer in &refused {
        retry_after(answer);
    }

    // Another address is served; the flooder still is not.
    for _ in 0..5 {
        assert_eq!(ask_from(other, to, SECRET).await.status, 200);
    }
    let refusal = ask_from(flooder, to, SECRET).await;
    let wait = retry_after(&refusal);
    // Waiting as told is enough.
    tokio::time::sleep(Duration::from_secs(wait)).await;
    assert_eq!(ask_from(flooder, to, SECRET).await.status, 200);

    // Callers without the secret are limited by address all the same
    // (429 before 401), and counted.
    let stranger = source(22);
    let (answers, _) = flood(to, &[stranger], "wrong", 30).await;
    let unauthorized = answers.iter().filter(|a| a.status == 401).count();
    let limited = answers.iter().filter(|a| a.status == 429).count();
    assert!(
        unauthorized >= BURST && unauthorized + limited == 30,
        "{answers:?}"
    );

    let text = running.scrape();
    let refusals = (refused.len() + 1 + limited) as f64;
    assert_eq!(
        metric(
            &text,
            "matcher_limits_hit_total{limit=\"rate_limit_source\"}"
        ),
        refusals
    );
    assert_eq!(
        metric(&text, "matcher_refusals_total{reason=\"rate_limited\"}"),
        refusals
    );
    assert_eq!(
        metric(&text, "matcher_refusals_total{reason=\"unauthorized\"}"),
        unauthorized as f64
    );
    assert_eq!(
        metric(&text, "matcher_tokens_issued_total{transport=\"udp\"}"),
        (served + 5 + 1) as f64
    );
    let stderr = running.stop();
    assert!(stderr.contains("limit rate_limit_source:"), "{stderr}");
    assert!(stderr.contains("127.0.0.20"), "{stderr}");
    assert!(stderr.lines().count() < 10, "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_secret_has_a_limit_of_its_own_across_addresses() {
    let _turn = shared_turn().await;
    const RATE: f64 = 5.0;
    const BURST: usize = 10;
    const FLOOD: usize = 60;
    let running = Running::start_with(
        "rate-secret",
        &["127.0.0.1:40000".parse().unwrap()],
        &[
            "--rate-per-source".into(),
            "0".into(),
            "--rate-per-secret".into(),
            "5".into(),
            "--burst-per-secret".into(),
            BURST.to_string(),
            "--metrics".into(),
            "127.0.0.1:0".into(),
        ],
    );
    let to = running.address();
    let sources: Vec<IpAddr> = (30..36).map(source).collect();
    let (answers, took) = flood(to, &sources, SECRET, FLOOD).await;
    let served = answers.iter().filter(|a| a.status == 200).count();
    let allowed = BURST + (RATE * took.as_secs_f64()).ceil() as usize;
    assert!(
        served >= BURST && served <= allowed,
        "{served} served in {took:?}, at most {allowed} allowed"
    );
    let mut last_wait = 1;
    for answer in answers.iter().filter(|a| a.status != 200) {
        last_wait = retry_after(answer);
    }
    // Callers without the secret are not counted against it (401, not
    // 429), nor is anyone kept from /health.
    for n in 0..20 {
        let stranger = ask_from(source(40 + n % 4), to, "wrong").await;
        assert_eq!(stranger.status, 401, "{stranger:?}");
    }
    let health = raw(
        source(41),
        to,
        b"GET /health HTTP/1.1\r\nHost: m\r\nConnection: close\r\n\r\n",
    )
    .await
    .expect("an answer");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    tokio::time::sleep(Duration::from_secs(last_wait)).await;
    assert_eq!(ask_from(sources[0], to, SECRET).await.status, 200);

    let text = running.scrape();
    assert_eq!(
        metric(
            &text,
            "matcher_limits_hit_total{limit=\"rate_limit_secret\"}"
        ),
        (FLOOD - served) as f64
    );
    assert_eq!(
        metric(
            &text,
            "matcher_limits_hit_total{limit=\"rate_limit_source\"}"
        ),
        0.0
    );
    let stderr = running.stop();
    assert!(stderr.contains("limit rate_limit_secret:"), "{stderr}");
    assert!(stderr.lines().count() < 10, "{stderr}");
}
