//! Where a limit that bites is told: it is counted in the metrics, and
//! logged (as a warning) without letting a flood become a flood of lines.
//! The first bite of a limit after a quiet interval is reported at once,
//! with what bit; the bites after it within the interval are only counted,
//! and the count reported when the interval is over. So each limit writes
//! at most about two lines per interval, however hard it is hit.
//!
//! A listener's [`Monitor`] is also the observer of its HTTP server: the
//! connections it opens and closes, the limits its server enforces
//! (connection cap, header-read, idle and request timeouts), and its
//! failures to accept, which are reported at most once per
//! [`ACCEPT_REPORT_EVERY`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netcode_metrics::http::{Closure, Event, Observer};

use crate::metrics::{Limit, Metrics};

/// Least time between two lines about failing to accept.
pub(crate) const ACCEPT_REPORT_EVERY: Duration = Duration::from_secs(10);

/// What is known about one limit's reports.
#[derive(Debug, Clone, Copy, Default)]
struct Reports {
    /// When its last line was written.
    last_line: Option<Instant>,
    /// Bites since then, not yet reported.
    unreported: u64,
}

/// The metrics of a listener and the log of its limits.
#[derive(Debug)]
pub(crate) struct Monitor {
    /// What the lines call the listener (empty for the token listener).
    listener: &'static str,
    /// The metrics counted.
    pub(crate) metrics: Arc<Metrics>,
    /// Least time between two reports of one limit.
    interval: Duration,
    reports: Mutex<[Reports; Limit::ALL.len()]>,
    /// Failures to accept since the last line about them, and when that
    /// was.
    accept_failures: Mutex<Reports>,
}

impl Monitor {
    /// A monitor counting into `metrics`, reporting each limit at most
    /// once per `interval` (plus one count of what it held back); its
    /// lines name `listener` unless it is empty.
    pub(crate) fn new(listener: &'static str, metrics: Arc<Metrics>, interval: Duration) -> Self {
        Self {
            listener,
            metrics,
            interval,
            reports: Mutex::new([Reports::default(); Limit::ALL.len()]),
            accept_failures: Mutex::new(Reports::default()),
        }
    }

    /// `limit` bit; `what` says how, if this bite gets a line of its own.
    pub(crate) fn bit(&self, limit: Limit, what: impl FnOnce() -> String) {
        self.metrics.limit_hit(limit);
        self.noted(limit, what);
    }

    /// Reports `limit` biting (counted elsewhere).
    pub(crate) fn noted(&self, limit: Limit, what: impl FnOnce() -> String) {
        let now = Instant::now();
        let held_back = {
            let mut reports = self.reports.lock().unwrap_or_else(|e| e.into_inner());
            let report = &mut reports[limit.index()];
            if report
                .last_line
                .is_some_and(|last| now.duration_since(last) < self.interval)
            {
                report.unreported += 1;
                return;
            }
            report.last_line = Some(now);
            std::mem::take(&mut report.unreported)
        };
        let more = match held_back {
            0 => String::new(),
            n => format!(" ({n} more before this since the last report)"),
        };
        let line = self.line(limit, &what());
        log::warn!("{line}{more}");
    }

    /// Writes the count of bites held back for each limit whose interval
    /// is over; called every interval.
    pub(crate) fn flush(&self) {
        let now = Instant::now();
        let mut lines = Vec::new();
        {
            let mut reports = self.reports.lock().unwrap_or_else(|e| e.into_inner());
            for limit in Limit::ALL {
                let report = &mut reports[limit.index()];
                let due = report
                    .last_line
                    .is_none_or(|last| now.duration_since(last) >= self.interval);
                if report.unreported > 0 && due {
                    let since = report
                        .last_line
                        .map_or(0.0, |last| now.duration_since(last).as_secs_f64());
                    lines.push(self.line(
                        limit,
                        &format!("{} more in the last {since:.0} s", report.unreported),
                    ));
                    report.unreported = 0;
                    report.last_line = Some(now);
                }
            }
        }
        for line in lines {
            log::warn!("{line}");
        }
    }

    /// Reports every `interval`, until the runtime stops.
    pub(crate) fn spawn_flusher(self: &Arc<Self>) {
        let monitor = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(monitor.interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                monitor.flush();
            }
        });
    }

    /// A line about `limit`.
    fn line(&self, limit: Limit, what: &str) -> String {
        match self.listener {
            "" => format!("limit {}: {what}", limit.name()),
            listener => format!("{listener}: limit {}: {what}", limit.name()),
        }
    }

    /// Reports a failure to accept a connection, at most once per
    /// [`ACCEPT_REPORT_EVERY`] with the count since the last report.
    fn accept_failed(&self, error: &std::io::Error) {
        let now = Instant::now();
        let failures = {
            let mut failures = self
                .accept_failures
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            failures.unreported += 1;
            if failures
                .last_line
                .is_some_and(|last| now.duration_since(last) < ACCEPT_REPORT_EVERY)
            {
                return;
            }
            failures.last_line = Some(now);
            std::mem::take(&mut failures.unreported)
        };
        let listener = match self.listener {
            "" => String::new(),
            listener => format!("{listener}: "),
        };
        log::error!(
            "{listener}cannot accept connections ({failures} failures since the last report): \
             {error}"
        );
    }

    /// Bites of `limit` not yet reported.
    #[cfg(test)]
    fn unreported(&self, limit: Limit) -> u64 {
        self.reports.lock().unwrap()[limit.index()].unreported
    }
}

impl Observer for Monitor {
    fn observe(&self, event: Event<'_>) {
        match event {
            Event::Opened { .. } => self.metrics.connection_opened(),
            Event::Evicted { peer, idle } => self.bit(Limit::ConnectionCap, || {
                format!(
                    "every slot taken: closed a connection idle for {:.1} s to make room for {peer}",
                    idle.as_secs_f64()
                )
            }),
            Event::Refused { peer } => self.bit(Limit::ConnectionCap, || {
                format!("every slot taken by a request in progress: turned {peer} away")
            }),
            Event::RequestTimedOut { peer, after } => {
                self.metrics.timed_out(after);
                self.bit(Limit::RequestTimeout, || {
                    format!("{peer} did not finish its request in time: 408")
                });
            }
            Event::Closed { peer, closure } => {
                match closure {
                    Closure::HeaderTimeout => self.bit(Limit::HeaderTimeout, || {
                        format!("closed {peer}: no whole header in time")
                    }),
                    Closure::Idle => self.bit(Limit::IdleTimeout, || {
                        format!("closed {peer}: silent too long")
                    }),
                    _ => {}
                }
                self.metrics.connection_closed();
            }
            Event::AcceptFailed { error } => self.accept_failed(error),
            Event::CutAtShutdown { open } => {
                log::warn!("{open} connections still open at shutdown were cut");
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_counted_not_written_line_by_line() {
        let monitor = Monitor::new("", Arc::new(Metrics::new()), Duration::from_secs(3600));
        let mut asked = 0;
        for _ in 0..1000 {
            monitor.bit(Limit::RateLimitSource, || {
                asked += 1;
                "too many".into()
            });
        }
        // Only the first bite was put into words.
        assert_eq!(asked, 1);
        assert_eq!(monitor.unreported(Limit::RateLimitSource), 999);
        assert_eq!(monitor.unreported(Limit::ConnectionCap), 0);
        // The interval is not over: nothing is flushed yet.
        monitor.flush();
        assert_eq!(monitor.unreported(Limit::RateLimitSource), 999);
        assert!(
            monitor
                .metrics
                .text()
                .contains("matcher_limits_hit_total{limit=\"rate_limit_source\"} 1000")
        );
    }

    #[test]
    fn held_back_bites_are_flushed_after_the_interval() {
        let monitor = Monitor::new(
            "metrics",
            Arc::new(Metrics::new()),
            Duration::from_millis(1),
        );
        monitor.bit(Limit::IdleTimeout, || "first".into());
        monitor.reports.lock().unwrap()[Limit::IdleTimeout.index()].unreported = 5;
        std::thread::sleep(Duration::from_millis(5));
        monitor.flush();
        assert_eq!(monitor.unreported(Limit::IdleTimeout), 0);
        assert_eq!(
            monitor.line(Limit::IdleTimeout, "x"),
            "metrics: limit idle_timeout: x"
        );
    }

    #[test]
    fn the_servers_events_are_counted() {
        let monitor = Monitor::new("", Arc::new(Metrics::new()), Duration::from_secs(3600));
        let peer = "192.0.2.1:1000".parse().unwrap();
        monitor.observe(Event::Opened { peer });
        monitor.observe(Event::Opened { peer });
        monitor.observe(Event::Evicted {
            peer,
            idle: Duration::from_secs(1),
        });
        monitor.observe(Event::Closed {
            peer,
            closure: Closure::HeaderTimeout,
        });
        monitor.observe(Event::RequestTimedOut {
            peer,
            after: Duration::from_secs(1),
        });
        let text = monitor.metrics.text();
        for line in [
            "matcher_open_connections 1",
            "matcher_connections_accepted_total 2",
            "matcher_limits_hit_total{limit=\"connection_cap\"} 1",
            "matcher_limits_hit_total{limit=\"header_timeout\"} 1",
            "matcher_limits_hit_total{limit=\"request_timeout\"} 1",
            "matcher_refusals_total{reason=\"request_timeout\"} 1",
            "matcher_request_duration_seconds_count 1",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        let error = std::io::Error::other("out of files");
        for _ in 0..3 {
            monitor.observe(Event::AcceptFailed { error: &error });
        }
        // The first was reported; the two after wait for the next report.
        assert_eq!(monitor.accept_failures.lock().unwrap().unreported, 2);
    }
}
