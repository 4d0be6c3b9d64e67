//! `--metrics ADDRESS`: the server's Prometheus metrics over HTTP, through
//! netcode-metrics (the netcode server's counters, slots and clients) plus
//! the link to the Agones sidecar, so that a sidecar gone away mid-match
//! shows on a dashboard: `netcode_agones_sidecar_up`,
//! `netcode_agones_allocated`, `netcode_agones_players_tracked`,
//! `netcode_agones_players_pending` (gauges) and the counters
//! `netcode_agones_health_pings_total`,
//! `netcode_agones_health_pings_missed_total`,
//! `netcode_agones_health_streams_lost_total`,
//! `netcode_agones_sdk_calls_failed_total`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netcode_agones::{DedicatedServer, LinkStats};
use netcode_metrics::prometheus_client::metrics::counter::Counter;
use netcode_metrics::prometheus_client::metrics::gauge::Gauge;
use netcode_metrics::prometheus_client::registry::Registry;
use netcode_metrics::{MetricsEndpoint, ServerMetrics};

/// How often the loop records its figures for the scrapes.
const RECORD_PERIOD: Duration = Duration::from_millis(250);

/// The metrics and their endpoint.
pub(crate) struct Metrics {
    server: ServerMetrics,
    link: LinkMetrics,
    last_record: Option<Instant>,
    _endpoint: MetricsEndpoint,
}

impl Metrics {
    /// Serves the metrics at `address` from a thread of the endpoint's.
    pub(crate) fn serve(address: SocketAddr) -> Result<Self, String> {
        let server = ServerMetrics::new();
        let mut registry = server.registry();
        let link = LinkMetrics::register(&mut registry);
        let endpoint = MetricsEndpoint::serve(address, registry)
            .map_err(|e| format!("--metrics {address}: {e}"))?;
        log::info!("metrics on http://{}/metrics", endpoint.local_addr());
        Ok(Self {
            server,
            link,
            last_record: None,
            _endpoint: endpoint,
        })
    }

    /// The loop's frame at `now`: counts this update's events, and records
    /// the server's and the link's figures when the period has passed.
    pub(crate) fn frame(&mut self, now: Instant, dedicated: &DedicatedServer) {
        for event in dedicated.events() {
            self.server.count_event(event);
        }
        let due = self
            .last_record
            .is_none_or(|last| now.saturating_duration_since(last) >= RECORD_PERIOD);
        if due {
            self.last_record = Some(now);
            self.server.record(dedicated.server());
            self.link.record(
                &dedicated.link().stats(),
                dedicated.link().allocated_at().is_some(),
            );
        }
    }
}

/// The link's figures as Prometheus metrics.
struct LinkMetrics {
    sidecar_up: Gauge,
    allocated: Gauge,
    players_tracked: Gauge,
    players_pending: Gauge,
    health_pings: Counter,
    health_pings_missed: Counter,
    health_streams_lost: Counter,
    sdk_calls_failed: Counter,
    /// The figures last recorded, for the counters' increments.
    last: LinkStats,
}

impl LinkMetrics {
    fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            sidecar_up: Gauge::default(),
            allocated: Gauge::default(),
            players_tracked: Gauge::default(),
            players_pending: Gauge::default(),
            health_pings: Counter::default(),
            health_pings_missed: Counter::default(),
            health_streams_lost: Counter::default(),
            sdk_calls_failed: Counter::default(),
            last: LinkStats::default(),
        };
        let gauges = [
            (
                "netcode_agones_sidecar_up",
                "1 while the Agones sidecar answers, else 0",
                &metrics.sidecar_up,
            ),
            (
                "netcode_agones_allocated",
                "1 once the GameServer was seen Allocated",
                &metrics.allocated,
            ),
            (
                "netcode_agones_players_tracked",
                "players the sidecar holds in the players list",
                &metrics.players_tracked,
            ),
            (
                "netcode_agones_players_pending",
                "player list changes not yet confirmed by the sidecar",
                &metrics.players_pending,
            ),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        let counters = [
            (
                "netcode_agones_health_pings",
                "health pings handed to an open health stream",
                &metrics.health_pings,
            ),
            (
                "netcode_agones_health_pings_missed",
                "health pings due while no health stream was open",
                &metrics.health_pings_missed,
            ),
            (
                "netcode_agones_health_streams_lost",
                "health streams found closed (the sidecar went away)",
                &metrics.health_streams_lost,
            ),
            (
                "netcode_agones_sdk_calls_failed",
                "Agones SDK calls that failed",
                &metrics.sdk_calls_failed,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
        metrics
    }

    /// Brings the metrics to `stats`.
    fn record(&mut self, stats: &LinkStats, allocated: bool) {
        let gauge = |gauge: &Gauge, value: usize| {
            gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
        };
        gauge(&self.sidecar_up, usize::from(stats.sidecar_up));
        gauge(&self.allocated, usize::from(allocated));
        gauge(&self.players_tracked, stats.players_tracked);
        gauge(&self.players_pending, stats.players_pending);
        let counters = [
            (
                &self.health_pings,
                stats.health_pings,
                self.last.health_pings,
            ),
            (
                &self.health_pings_missed,
                stats.health_pings_missed,
                self.last.health_pings_missed,
            ),
            (
                &self.health_streams_lost,
                stats.health_streams_lost,
                self.last.health_streams_lost,
            ),
            (
                &self.sdk_calls_failed,
                stats.sdk_calls_failed,
                self.last.sdk_calls_failed,
            ),
        ];
        for (counter, now, before) in counters {
            counter.inc_by(now.saturating_sub(before));
        }
        self.last = stats.clone();
    }
}
