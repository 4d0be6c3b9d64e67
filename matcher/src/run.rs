//! The matcher program's life: it raises its file-descriptor limit, sizes
//! its connection cap below it, binds the token listener (and the metrics
//! listener if asked), prints where they are, and serves them with
//! netcode-metrics' bounded HTTP server until Ctrl-C or SIGTERM, then lets
//! requests in progress finish.

use std::future::Future;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::middleware::from_fn_with_state;
use netcode_metrics::http::{HttpServer, Limits, WhenFull};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tower::ServiceExt;

use crate::config::{ConfigError, Options};
use crate::fleet::FleetConfigError;
use crate::http::router;
use crate::limits::{RateLimits, ZeroBurst, limit_rates};
use crate::metrics::{Metrics, count_answers, metrics_router};
use crate::monitor::Monitor;

/// The connection cap when none is given and the file-descriptor limit
/// leaves room: with hyper's 8 KiB read buffer and the task around it,
/// some 10 KiB a connection, about 40 MiB when full.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Connections the metrics listener holds at most (scrapers are few).
const METRICS_MAX_CONNECTIONS: NonZeroUsize = NonZeroUsize::new(16).expect("16 is not zero");

/// File descriptors kept for everything but connections: the listeners,
/// the runtime's, standard streams, files read at each request.
const RESERVED_FDS: u64 = 128;

/// Why the matcher did not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The secret, key or browser options are unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The Agones fleet options are unusable.
    #[error(transparent)]
    Fleet(#[from] FleetConfigError),
    /// The connection cap asked for cannot be had.
    #[error(transparent)]
    ConnectionCap(#[from] CapError),
    /// A rate limit is on with a burst of 0.
    #[error(transparent)]
    Burst(#[from] ZeroBurst),
    /// A listener cannot be bound.
    #[error("{option}: cannot listen on {address}: {error}")]
    Bind {
        /// The option that named the address.
        option: &'static str,
        /// The address.
        address: SocketAddr,
        /// What the operating system said.
        error: io::Error,
    },
}

/// Why the token listener's connection cap cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapError {
    /// `--max-connections 0`.
    #[error("--max-connections must be at least 1")]
    Zero,
    /// More connections than the open-file limit leaves room for.
    #[error(
        "--max-connections {asked} needs more file descriptors than the limit of \
         {fd_limit} leaves room for (at most {room})"
    )]
    TooMany {
        /// The cap asked for.
        asked: usize,
        /// The open-file limit.
        fd_limit: u64,
        /// The most connections it leaves room for.
        room: usize,
    },
    /// The open-file limit leaves no room for a single connection.
    #[error("the open-file limit of {0} leaves no room for connections")]
    NoRoom(u64),
}

/// Raises the soft limit on open files to the hard limit; the limit in
/// force after (the operating system's usual 1024 if it cannot be read).
fn raise_fd_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            log::warn!("cannot raise the open-file limit: {e}");
            rlimit::Resource::NOFILE
                .get()
                .map_or(1024, |(soft, _)| soft)
        }
    }
}

/// The token listener's connection cap: `asked`, or the default, within
/// what `fd_limit` leaves room for.
fn connection_cap(asked: Option<usize>, fd_limit: u64) -> Result<NonZeroUsize, CapError> {
    let room = fd_limit.saturating_sub(RESERVED_FDS + METRICS_MAX_CONNECTIONS.get() as u64);
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    let cap = match asked {
        Some(asked) if asked > room => {
            return Err(CapError::TooMany {
                asked,
                fd_limit,
                room,
            });
        }
        Some(asked) => asked,
        None => DEFAULT_MAX_CONNECTIONS.min(room),
    };
    NonZeroUsize::new(cap).ok_or(match asked {
        Some(_) => CapError::Zero,
        None => CapError::NoRoom(fd_limit),
    })
}

/// Connections the kernel completes and holds for a listener until it
/// accepts them (the system's `somaxconn` caps it; tokio's default is
/// 1024). A burst of connections larger than the queue has some of its
/// handshakes dropped, and their callers (real ones among them) retry only
/// a second later; a longer queue lets the accept loop catch up and the
/// connection cap decide who stays.
const LISTEN_BACKLOG: u32 = 4096;

/// Binds `address` with a [`LISTEN_BACKLOG`] queue, saying which option
/// asked for it if it cannot.
fn bind(address: SocketAddr, option: &'static str) -> Result<TcpListener, RunError> {
    let listen = || {
        let socket = match address {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        // As tokio's own `bind`: a restarted matcher rebinds its port
        // while connections of the last one linger in TIME_WAIT.
        socket.set_reuseaddr(true)?;
        socket.bind(address)?;
        socket.listen(LISTEN_BACKLOG)
    };
    listen().map_err(|error| RunError::Bind {
        option,
        address,
        error,
    })
}

/// The address `listener` is bound to (the one asked for, if that cannot
/// be read).
fn bound(listener: &TcpListener, asked: SocketAddr) -> SocketAddr {
    listener.local_addr().unwrap_or(asked)
}

/// Resolves at Ctrl-C or SIGTERM.
async fn stop_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

/// Resolves once `stop` says so.
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|&stop| stop).await;
}

/// Serves `app` on `listener` within `limits`, telling `monitor` what
/// happens to the connections, until `shutdown` resolves.
async fn serve(
    listener: TcpListener,
    limits: Limits,
    app: Router,
    monitor: Arc<Monitor>,
    shutdown: impl Future<Output = ()>,
) {
    HttpServer::new(listener, limits)
        .with_observer(monitor)
        .serve(
            move |request| {
                let answer = app.clone().oneshot(request.map(Body::new));
                async move {
                    match answer.await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                }
            },
            shutdown,
        )
        .await;
}

/// Runs the matcher `options` describe until Ctrl-C or SIGTERM.
pub async fn run(options: &Options) -> Result<(), RunError> {
    let matcher = Arc::new(options.load()?);
    let fleet = options.fleet_source()?.map(Arc::new);
    let limits = &options.limits;
    let fd_limit = raise_fd_limit();
    let max_connections = connection_cap(limits.max_connections, fd_limit)?;
    let metrics = Arc::new(Metrics::new());
    let monitor = Arc::new(Monitor::new(
        "",
        Arc::clone(&metrics),
        limits.limit_log_interval,
    ));
    // Counted first, then rate-limited; the server times each request out
    // around both.
    let rate_limits = Arc::new(RateLimits::new(
        limits,
        matcher.secret().clone(),
        Arc::clone(&monitor),
    )?);
    let app = router(matcher, fleet)
        .layer(from_fn_with_state(Arc::clone(&rate_limits), limit_rates))
        .layer(from_fn_with_state(Arc::clone(&metrics), count_answers));
    let listener = bind(options.listen, "--listen")?;
    let metrics_listener = match options.metrics {
        Some(address) => Some(bind(address, "--metrics")?),
        None => None,
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(
        stdout,
        "listening on http://{}",
        bound(&listener, options.listen)
    );
    if let (Some(listener), Some(asked)) = (&metrics_listener, options.metrics) {
        let _ = writeln!(
            stdout,
            "metrics on http://{}/metrics",
            bound(listener, asked)
        );
    }
    let _ = stdout.flush();
    log::info!(
        "at most {max_connections} connections (open-file limit {fd_limit}); \
         timeouts: header {:?}, idle {:?}, request {:?}; rate per source {}/s, per secret {}/s \
         (0: unlimited)",
        limits.header_read_timeout,
        limits.idle_timeout,
        limits.request_timeout,
        limits.rate_per_source,
        limits.rate_per_secret,
    );
    rate_limits.spawn_pruner();
    monitor.spawn_flusher();

    let token_limits = Limits {
        max_connections,
        when_full: WhenFull::EvictOldestIdle,
        header_read_timeout: limits.header_read_timeout,
        idle_timeout: Some(limits.idle_timeout),
        request_timeout: Some(limits.request_timeout),
        connection_lifetime: None,
        shutdown_grace: limits.request_timeout,
    };
    let (stop, stop_seen) = watch::channel(false);
    tokio::spawn(async move {
        stop_signal().await;
        let _ = stop.send(true);
    });
    let metrics_server = metrics_listener.map(|listener| {
        // Its own counts go nowhere: the metrics are the token listener's.
        let own = Arc::new(Monitor::new(
            "metrics listener",
            Arc::new(Metrics::new()),
            limits.limit_log_interval,
        ));
        own.spawn_flusher();
        let limits = Limits {
            max_connections: METRICS_MAX_CONNECTIONS,
            request_timeout: None,
            ..token_limits
        };
        tokio::spawn(serve(
            listener,
            limits,
            metrics_router(Arc::clone(&metrics)),
            own,
            stopped(stop_seen.clone()),
        ))
    });
    serve(listener, token_limits, app, monitor, stopped(stop_seen)).await;
    if let Some(metrics_server) = metrics_server {
        let _ = tokio::time::timeout(Duration::from_secs(1), metrics_server).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_below_the_open_file_limit() {
        let cap = |n| NonZeroUsize::new(n).unwrap();
        assert_eq!(
            connection_cap(None, 1 << 20),
            Ok(cap(DEFAULT_MAX_CONNECTIONS))
        );
        assert_eq!(connection_cap(None, 1024), Ok(cap(1024 - 128 - 16)));
        assert_eq!(connection_cap(Some(10), 1024), Ok(cap(10)));
        assert_eq!(connection_cap(Some(880), 1024), Ok(cap(880)));
        assert_eq!(
            connection_cap(Some(881), 1024),
            Err(CapError::TooMany {
                asked: 881,
                fd_limit: 1024,
                room: 880
            })
        );
        assert_eq!(connection_cap(Some(0), 1024), Err(CapError::Zero));
        assert_eq!(connection_cap(None, 100), Err(CapError::NoRoom(100)));
    }
}
