//! The limits that keep the matcher up under abuse: their options
//! ([`LimitOptions`]; the HTTP server enforces those on connections and
//! time), and the rate limits per caller the matcher keeps itself, with
//! `governor` (GCRA: a sustained rate and a burst): each source address
//! may make so many requests per second (IPv6 sources counted by their
//! /64, which one subscriber usually holds whole), and the callers
//! presenting the bearer secret so many token requests together. A request
//! over a limit gets 429 with `Retry-After` before anything else is looked
//! at.
//!
//! Memory stays bounded: the state of a source whose bucket has refilled
//! is indistinguishable from no state and is pruned every few seconds, and
//! beyond [`MAX_SOURCES`] sources at once the table is pruned at once and,
//! if still full, new requests are refused until it drains.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use clap::Args;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota};
use netcode_metrics::http::Peer;

use crate::metrics::{Limit, LimitAnswer};
use crate::monitor::Monitor;
use crate::parse::parse_seconds;
use crate::secret::Secret;

/// Most source addresses (or IPv6 /64s) whose rate is tracked at once:
/// some 100 bytes each, a few megabytes in all.
pub(crate) const MAX_SOURCES: usize = 65_536;

/// How often the state of sources that have gone quiet is dropped.
pub(crate) const PRUNE_EVERY: Duration = Duration::from_secs(5);

/// The limits on what callers may hold and ask for: connections, the time
/// each part of a request may take, and requests per second (durations in
/// seconds, fractions allowed).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitOptions {
    /// Most connections open at once (default: 4096, or fewer when the
    /// file-descriptor limit, raised to its hard limit at start, leaves
    /// less room). When full, a new connection takes the place of the
    /// oldest one not in the middle of a request (idle, or still sending
    /// its header); if every connection is mid-request it is closed at
    /// once.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Seconds a connection has, from its opening or the end of its
    /// previous answer, to send a request's whole header; slower ones are
    /// closed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub header_read_timeout: Duration,

    /// Seconds a connection may stay silent, from its opening or the end of
    /// its previous answer, before it is closed (keep-alive).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_seconds)]
    pub idle_timeout: Duration,

    /// Seconds a request has, once its header is in, to send its body and
    /// be answered; past that it gets 408 and its connection is closed.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub request_timeout: Duration,

    /// Requests per second one source address may make, sustained (IPv6
    /// addresses counted by their /64); beyond it, 429 with Retry-After.
    /// 0 turns this limit off.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rate_per_source: u32,

    /// Requests one source address may make at once after a quiet spell
    /// (default: twice --rate-per-source).
    #[arg(long, value_name = "N")]
    pub burst_per_source: Option<u32>,

    /// Token requests per second callers presenting the bearer secret may
    /// make together, sustained; beyond it, 429 with Retry-After. 0 turns
    /// this limit off.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub rate_per_secret: u32,

    /// Token requests callers presenting the bearer secret may make at once
    /// after a quiet spell (default: twice --rate-per-secret).
    #[arg(long, value_name = "N")]
    pub burst_per_secret: Option<u32>,

    /// Seconds between two log lines about the same limit biting: the first
    /// time it bites is reported at once, the times after are counted and
    /// reported together.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = parse_seconds)]
    pub limit_log_interval: Duration,
}

/// A caller as the per-source limit counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    V4(std::net::Ipv4Addr),
    /// The first 64 bits of an IPv6 address.
    V6(u64),
}

impl Source {
    fn of(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self::V4(v4),
            IpAddr::V6(v6) => Self::V6((v6.to_bits() >> 64) as u64),
        }
    }
}

/// A burst of 0 asked for a rate limit that is on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--burst-per-{0} must be at least 1")]
pub struct ZeroBurst(
    /// What the limit is per: `source` or `secret`.
    pub &'static str,
);

/// The rate limits of the token listener.
#[derive(Debug)]
pub(crate) struct RateLimits {
    /// Whose presenters share the per-secret limit.
    secret: Secret,
    monitor: Arc<Monitor>,
    per_source: Option<DefaultKeyedRateLimiter<Source>>,
    per_secret: Option<DefaultDirectRateLimiter>,
    clock: DefaultClock,
    /// Held while pruning, so that only one request prunes at a time.
    pruning: Mutex<()>,
}

/// The quota of `rate` per second with `burst` (default twice the rate);
/// `None` for a rate of 0 (no limit).
fn quota(rate: u32, burst: Option<u32>, name: &'static str) -> Result<Option<Quota>, ZeroBurst> {
    let Some(rate) = NonZeroU32::new(rate) else {
        return Ok(None);
    };
    let burst = burst.unwrap_or(rate.get().saturating_mul(2));
    let burst = NonZeroU32::new(burst).ok_or(ZeroBurst(name))?;
    Ok(Some(Quota::per_second(rate).allow_burst(burst)))
}

impl RateLimits {
    /// The limits `options` ask for, the per-secret one on requests
    /// presenting `secret`.
    pub(crate) fn new(
        options: &LimitOptions,
        secret: Secret,
        monitor: Arc<Monitor>,
    ) -> Result<Self, ZeroBurst> {
        let per_source = quota(options.rate_per_source, options.burst_per_source, "source")?;
        let per_secret = quota(options.rate_per_secret, options.burst_per_secret, "secret")?;
        Ok(Self {
            secret,
            monitor,
            per_source: per_source.map(DefaultKeyedRateLimiter::keyed),
            per_secret: per_secret.map(DefaultDirectRateLimiter::direct),
            clock: DefaultClock::default(),
            pruning: Mutex::new(()),
        })
    }

    /// Drops the state of sources whose bucket has refilled.
    pub(crate) fn prune(&self) {
        let Some(limiter) = &self.per_source else {
            return;
        };
        if let Ok(_pruning) = self.pruning.try_lock() {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// Prunes every [`PRUNE_EVERY`], until the runtime stops.
    pub(crate) fn spawn_pruner(self: &Arc<Self>) {
        let limits = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(PRUNE_EVERY);
            loop {
                ticks.tick().await;
                limits.prune();
            }
        });
    }

    /// The answer to `request` if a limit refuses it.
    fn refusal(&self, request: &Request) -> Option<Response> {
        if let (Some(limiter), Some(Peer(peer))) = (&self.per_source, request.extensions().get()) {
            if limiter.len() >= MAX_SOURCES {
                self.prune();
            }
            let source = Source::of(peer.ip());
            let wait = if limiter.len() >= MAX_SOURCES {
                Some((Duration::from_secs(1), "too many callers at once"))
            } else {
                limiter.check_key(&source).err().map(|not_until| {
                    let wait = not_until.wait_time_from(self.clock.now());
                    (wait, "too many requests from this address")
                })
            };
            if let Some((wait, why)) = wait {
                self.monitor.noted(Limit::RateLimitSource, || {
                    format!("{why}: {} refused", peer.ip())
                });
                return Some(too_many(Limit::RateLimitSource, wait, why));
            }
        }
        if let Some(limiter) = &self.per_secret
            && request.uri().path() == "/token"
            && self.secret.presented_in(request.headers())
            && let Err(not_until) = limiter.check()
        {
            let why = "too many token requests for this secret";
            self.monitor
                .noted(Limit::RateLimitSecret, || format!("{why}: refused"));
            let wait = not_until.wait_time_from(self.clock.now());
            return Some(too_many(Limit::RateLimitSecret, wait, why));
        }
        None
    }

    /// How many sources are tracked now.
    #[cfg(test)]
    fn sources(&self) -> usize {
        self.per_source.as_ref().map_or(0, |limiter| limiter.len())
    }
}

/// Whole seconds to wait, rounded up, at least 1.
fn retry_after(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// A 429 answer from `limit`, asking to retry after `wait`.
fn too_many(limit: Limit, wait: Duration, why: &str) -> Response {
    let seconds = retry_after(wait);
    let body = serde_json::json!({ "error": format!("{why}: try again in {seconds} s") });
    let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (header::RETRY_AFTER, seconds.to_string()),
        ],
        body.to_string(),
    )
        .into_response();
    response.extensions_mut().insert(LimitAnswer(limit));
    response
}

/// Middleware refusing requests over a rate limit.
pub(crate) async fn limit_rates(
    State(limits): State<Arc<RateLimits>>,
    request: Request,
    next: Next,
) -> Response {
    match limits.refusal(&request) {
        Some(refusal) => refusal,
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn limits(args: &[&str]) -> RateLimits {
        let options = crate::config::options_with(args).unwrap();
        let monitor = Arc::new(Monitor::new(
            "",
            Arc::new(Metrics::new()),
            Duration::from_secs(60),
        ));
        RateLimits::new(&options.limits, Secret::new("secret".into()), monitor).unwrap()
    }

    fn request(from: &str, secret: Option<&str>) -> Request {
        let mut request = Request::post("/token");
        if let Some(secret) = secret {
            request = request.header("authorization", format!("Bearer {secret}"));
        }
        let mut request = request.body(axum::body::Body::empty()).unwrap();
        request.extensions_mut().insert(Peer(from.parse().unwrap()));
        request
    }

    #[test]
    fn each_source_has_its_burst_then_waits() {
        let limits = limits(&["--rate-per-source", "1", "--burst-per-source", "3"]);
        for _ in 0..3 {
            assert!(limits.refusal(&request("192.0.2.1:1000", None)).is_none());
        }
        let refused = limits
            .refusal(&request("192.0.2.1:1001", None))
            .expect("refused");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
        // Another address, and the same one as IPv4-mapped IPv6, are told
        // apart and alike.
        assert!(limits.refusal(&request("192.0.2.2:1000", None)).is_none());
        assert!(
            limits
                .refusal(&request("[::ffff:192.0.2.1]:1000", None))
                .is_some()
        );
        // One /64 is one source.
        for _ in 0..3 {
            assert!(limits.refusal(&request("[2001:db8::1]:1", None)).is_none());
        }
        assert!(
            limits
                .refusal(&request("[2001:db8::ffff:2]:1", None))
                .is_some()
        );
        assert!(
            limits
                .refusal(&request("[2001:db8:0:1::1]:1", None))
                .is_none()
        );
        assert_eq!(limits.sources(), 4);
    }

    #[test]
    fn the_secret_has_its_own_limit_and_strangers_do_not_use_it() {
        let limits = limits(&[
            "--rate-per-source",
            "0",
            "--rate-per-secret",
            "1",
            "--burst-per-secret",
            "2",
        ]);
        for _ in 0..5 {
            assert!(
                limits
                    .refusal(&request("192.0.2.1:1", Some("wrong")))
                    .is_none()
            );
        }
        for _ in 0..2 {
            assert!(
                limits
                    .refusal(&request("192.0.2.1:1", Some("secret")))
                    .is_none()
            );
        }
        let refused = limits
            .refusal(&request("192.0.2.9:1", Some("secret")))
            .expect("refused");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(refused.extensions().get::<LimitAnswer>().is_some());
        assert_eq!(limits.sources(), 0);
    }

    #[test]
    fn sources_that_went_quiet_are_forgotten() {
        let limits = limits(&["--rate-per-source", "1000", "--burst-per-source", "1"]);
        for n in 1..=3 {
            let from = format!("192.0.2.{n}:1");
            assert!(limits.refusal(&request(&from, None)).is_none());
        }
        assert_eq!(limits.sources(), 3);
        // A bucket of one refills in a millisecond.
        std::thread::sleep(Duration::from_millis(20));
        limits.prune();
        assert_eq!(limits.sources(), 0);
    }

    #[test]
    fn waits_round_up_to_whole_seconds() {
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_millis(50)), 1);
        assert_eq!(retry_after(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after(Duration::from_secs(3)), 3);
    }

    #[test]
    fn a_burst_of_zero_is_refused() {
        let options = crate::config::options_with(&["--burst-per-source", "0"]).unwrap();
        assert_eq!(quota(1, Some(0), "source"), Err(ZeroBurst("source")));
        assert_eq!(
            ZeroBurst("source").to_string(),
            "--burst-per-source must be at least 1"
        );
        assert!(quota(0, Some(0), "source").unwrap().is_none());
        assert!(
            quota(
                options.limits.rate_per_source,
                options.limits.burst_per_source,
                "source"
            )
            .is_err()
        );
    }
}
