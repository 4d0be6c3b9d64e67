//! What the matcher counts, in the Prometheus text format
//! (`prometheus-client`): tokens issued, requests refused and why, limits
//! that bit, request latency and open connections; the middleware that
//! counts every answer of the token listener, and the router of the
//! separate metrics listener (`GET /metrics`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// One label, `name="value"`.
type Label = [(&'static str, &'static str); 1];

/// A limit that can bite, as its metric label and log lines name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Limit {
    /// A connection arrived with every slot taken.
    ConnectionCap,
    /// A connection did not send a whole header in time.
    HeaderTimeout,
    /// A request was not answered in time (408).
    RequestTimeout,
    /// A connection stayed silent too long.
    IdleTimeout,
    /// Callers holding the secret asked too often (429).
    RateLimitSecret,
    /// One source address asked too often (429).
    RateLimitSource,
}

impl Limit {
    /// Every limit, in the order the log keeps them.
    pub(crate) const ALL: [Limit; 6] = [
        Limit::ConnectionCap,
        Limit::HeaderTimeout,
        Limit::RequestTimeout,
        Limit::IdleTimeout,
        Limit::RateLimitSecret,
        Limit::RateLimitSource,
    ];

    /// Its name, as the metric label and the log lines give it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Limit::ConnectionCap => "connection_cap",
            Limit::HeaderTimeout => "header_timeout",
            Limit::RequestTimeout => "request_timeout",
            Limit::IdleTimeout => "idle_timeout",
            Limit::RateLimitSecret => "rate_limit_secret",
            Limit::RateLimitSource => "rate_limit_source",
        }
    }

    /// Its place in [`Limit::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Marks an answer that issued a token, with the transport it is for
/// (`"udp"` or `"webtransport"`); the metrics middleware counts it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenIssued(pub(crate) &'static str);

/// Marks an answer a limit gave (429), so the middleware counts the limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LimitAnswer(pub(crate) Limit);

/// The refusal reasons counted, by the status that carries them.
const REASONS: [(StatusCode, &str); 10] = [
    (StatusCode::BAD_REQUEST, "bad_request"),
    (StatusCode::UNAUTHORIZED, "unauthorized"),
    (StatusCode::NOT_FOUND, "not_found"),
    (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
    (StatusCode::REQUEST_TIMEOUT, "request_timeout"),
    (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
    (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
    (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    (StatusCode::BAD_GATEWAY, "bad_gateway"),
    (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
];

/// The reason a refusal with `status` is counted under.
fn reason(status: StatusCode) -> &'static str {
    REASONS
        .iter()
        .find(|(s, _)| *s == status)
        .map_or("other", |(_, name)| name)
}

/// The matcher's metrics, and the registry that exposes them.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    tokens_issued: Family<Label, Counter>,
    refusals: Family<Label, Counter>,
    limits_hit: Family<Label, Counter>,
    request_duration: Histogram,
    open_connections: Gauge,
    connections_accepted: Counter,
}

impl Metrics {
    /// Every metric at zero, each label value the matcher can give already
    /// listed (so a scrape shows every series from the start).
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("matcher");
        let tokens_issued = Family::<Label, Counter>::default();
        for transport in ["udp", "webtransport"] {
            drop(tokens_issued.get_or_create(&[("transport", transport)]));
        }
        registry.register(
            "tokens_issued",
            "Connect tokens issued, by the transport they are for",
            tokens_issued.clone(),
        );
        let refusals = Family::<Label, Counter>::default();
        for (_, name) in REASONS {
            drop(refusals.get_or_create(&[("reason", name)]));
        }
        registry.register(
            "refusals",
            "Requests answered with an error status, by reason",
            refusals.clone(),
        );
        let limits_hit = Family::<Label, Counter>::default();
        for limit in Limit::ALL {
            drop(limits_hit.get_or_create(&[("limit", limit.name())]));
        }
        registry.register(
            "limits_hit",
            "Times a limit bit: connections closed or refused, requests refused",
            limits_hit.clone(),
        );
        let request_duration = Histogram::new([
            0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
            5.0, 10.0,
        ]);
        registry.register(
            "request_duration_seconds",
            "Time from a request's complete header to its answer",
            request_duration.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "open_connections",
            "Connections to the token listener open now",
            open_connections.clone(),
        );
        let connections_accepted = Counter::default();
        registry.register(
            "connections_accepted",
            "Connections the token listener accepted",
            connections_accepted.clone(),
        );
        Self {
            registry,
            tokens_issued,
            refusals,
            limits_hit,
            request_duration,
            open_connections,
            connections_accepted,
        }
    }

    /// Counts one bite of `limit`.
    pub(crate) fn limit_hit(&self, limit: Limit) {
        self.limits_hit
            .get_or_create(&[("limit", limit.name())])
            .inc();
    }

    /// Counts a connection accepted and now open.
    pub(crate) fn connection_opened(&self) {
        self.connections_accepted.inc();
        self.open_connections.inc();
    }

    /// Counts a connection closed.
    pub(crate) fn connection_closed(&self) {
        self.open_connections.dec();
    }

    /// Counts a request the server answered with 408 after `after`, its
    /// request timeout (the limit itself is counted by
    /// [`limit_hit`](Self::limit_hit)).
    pub(crate) fn timed_out(&self, after: Duration) {
        self.request_duration.observe(after.as_secs_f64());
        self.refusals
            .get_or_create(&[("reason", reason(StatusCode::REQUEST_TIMEOUT))])
            .inc();
    }

    /// Counts one answer, given `elapsed` seconds after its request.
    fn answered(&self, response: &Response, elapsed: f64) {
        self.request_duration.observe(elapsed);
        if let Some(TokenIssued(transport)) = response.extensions().get() {
            self.tokens_issued
                .get_or_create(&[("transport", transport)])
                .inc();
        }
        let status = response.status();
        if status.is_client_error() || status.is_server_error() {
            self.refusals
                .get_or_create(&[("reason", reason(status))])
                .inc();
        }
        if let Some(LimitAnswer(limit)) = response.extensions().get() {
            self.limit_hit(*limit);
        }
    }

    /// The metrics in the Prometheus (OpenMetrics) text format.
    pub(crate) fn text(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// Middleware counting each answer of the token listener and its latency
/// (but the 408 the server gives a request that runs out of time, which
/// never gets here: the server reports it).
pub(crate) async fn count_answers(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.answered(&response, started.elapsed().as_secs_f64());
    response
}

/// The metrics listener's routes: `GET /metrics`.
pub(crate) fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(metrics)
}

async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.text(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_is_there_from_the_start_and_moves() {
        let metrics = Metrics::new();
        let text = metrics.text();
        for line in [
            "matcher_tokens_issued_total{transport=\"udp\"} 0",
            "matcher_tokens_issued_total{transport=\"webtransport\"} 0",
            "matcher_refusals_total{reason=\"unauthorized\"} 0",
            "matcher_limits_hit_total{limit=\"connection_cap\"} 0",
            "matcher_limits_hit_total{limit=\"rate_limit_source\"} 0",
            "matcher_open_connections 0",
            "matcher_request_duration_seconds_count 0",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        let mut answer = StatusCode::TOO_MANY_REQUESTS.into_response();
        answer
            .extensions_mut()
            .insert(LimitAnswer(Limit::RateLimitSecret));
        metrics.answered(&answer, 0.001);
        let mut issued = StatusCode::OK.into_response();
        issued.extensions_mut().insert(TokenIssued("webtransport"));
        metrics.answered(&issued, 0.002);
        metrics.connection_opened();
        metrics.timed_out(Duration::from_secs(1));
        let text = metrics.text();
        for line in [
            "matcher_tokens_issued_total{transport=\"webtransport\"} 1",
            "matcher_refusals_total{reason=\"rate_limited\"} 1",
            "matcher_refusals_total{reason=\"request_timeout\"} 1",
            "matcher_limits_hit_total{limit=\"rate_limit_secret\"} 1",
            "matcher_open_connections 1",
            "matcher_request_duration_seconds_count 3",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert_eq!(reason(StatusCode::IM_A_TEAPOT), "other");
    }
}
