//! Rate limits per caller, kept by `governor` (GCRA: a sustained rate and
//! a burst): each source address may make so many requests per second
//! (IPv6 sources counted by their /64, which one subscriber usually holds
//! whole), and the callers presenting the bearer secret so many token
//! requests together. A request over a limit gets 429 with `Retry-After`
//! before anything else is looked at.
//!
//! Memory stays bounded: the state of a source whose bucket has refilled
//! is indistinguishable from no state and is pruned every few seconds, and
//! beyond [`MAX_SOURCES`] sources at once the table is pruned at once and,
//! if still full, new requests are refused until it drains.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota};

use crate::config::LimitOptions;
use crate::http::bearer;
use crate::issue::Matcher;
use crate::metrics::{Limit, LimitAnswer};
use crate::monitor::Monitor;

/// Most source addresses (or IPv6 /64s) whose rate is tracked at once:
/// some 100 bytes each, a few megabytes in all.
pub(crate) const MAX_SOURCES: usize = 65_536;

/// How often the state of sources that have gone quiet is dropped.
pub(crate) const PRUNE_EVERY: Duration = Duration::from_secs(5);

/// The address a request's connection comes from, put in each request's
/// extensions by the accept loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) SocketAddr);

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

/// The rate limits of the token listener.
#[derive(Debug)]
pub(crate) struct RateLimits {
    matcher: Arc<Matcher>,
    monitor: Arc<Monitor>,
    per_source: Option<DefaultKeyedRateLimiter<Source>>,
    per_secret: Option<DefaultDirectRateLimiter>,
    clock: DefaultClock,
    /// Held while pruning, so that only one request prunes at a time.
    pruning: Mutex<()>,
}

/// The quota of `rate` per second with `burst` (default twice the rate);
/// `None` for a rate of 0 (no limit).
fn quota(rate: u32, burst: Option<u32>, name: &str) -> Result<Option<Quota>, String> {
    let Some(rate) = NonZeroU32::new(rate) else {
        return Ok(None);
    };
    let burst = burst.unwrap_or(rate.get().saturating_mul(2));
    let burst = NonZeroU32::new(burst).ok_or(format!("--burst-per-{name} must be at least 1"))?;
    Ok(Some(Quota::per_second(rate).allow_burst(burst)))
}

impl RateLimits {
    /// The limits `options` ask for, on requests to `matcher`.
    pub(crate) fn new(
        options: &LimitOptions,
        matcher: Arc<Matcher>,
        monitor: Arc<Monitor>,
    ) -> Result<Self, String> {
        let per_source = quota(options.rate_per_source, options.burst_per_source, "source")?;
        let per_secret = quota(options.rate_per_secret, options.burst_per_secret, "secret")?;
        Ok(Self {
            matcher,
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
            && request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| bearer(value.as_bytes()))
                .is_some_and(|secret| self.matcher.authorized(secret))
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
        let matcher = Matcher::new(
            "secret".into(),
            netcode_std::Key::from_bytes([1; 32]),
            options.servers.clone(),
            vec![1],
            30,
            5,
        );
        let monitor = Arc::new(Monitor::new(
            "",
            Arc::new(Metrics::new()),
            Duration::from_secs(60),
        ));
        RateLimits::new(&options.limits, Arc::new(matcher), monitor).unwrap()
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
        assert!(quota(1, Some(0), "source").is_err());
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
