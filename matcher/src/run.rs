//! The matcher program's life: it raises its file-descriptor limit, sizes
//! its connection cap below it, binds the token listener (and the metrics
//! listener if asked), prints where they are, and serves them until Ctrl-C
//! or SIGTERM, then lets requests in progress finish.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::timeout::TimeoutLayer;

use crate::config::Options;
use crate::http::router;
use crate::issue::Matcher;
use crate::limits::{RateLimits, limit_rates};
use crate::metrics::{Metrics, count_answers, metrics_router};
use crate::monitor::Monitor;
use crate::serve::{ConnectionLimits, serve};
use crate::slots::Slots;

/// The connection cap when none is given and the file-descriptor limit
/// leaves room: with hyper's 8 KiB read buffer and the task around it,
/// some 10 KiB a connection, about 40 MiB when full.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Connections the metrics listener holds at most (scrapers are few).
const METRICS_MAX_CONNECTIONS: usize = 16;

/// File descriptors kept for everything but connections: the listeners,
/// the runtime's, standard streams, files read at each request.
const RESERVED_FDS: u64 = 128;

/// Raises the soft limit on open files to the hard limit; the limit in
/// force after (the operating system's usual 1024 if it cannot be read).
fn raise_fd_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            eprintln!("matcher: cannot raise the open-file limit: {e}");
            rlimit::Resource::NOFILE
                .get()
                .map_or(1024, |(soft, _)| soft)
        }
    }
}

/// The token listener's connection cap: `asked`, or the default, within
/// what `fd_limit` leaves room for.
fn connection_cap(asked: Option<usize>, fd_limit: u64) -> Result<usize, String> {
    let room = fd_limit.saturating_sub(RESERVED_FDS + METRICS_MAX_CONNECTIONS as u64);
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    match asked {
        Some(0) => Err("--max-connections must be at least 1".into()),
        Some(asked) if asked > room => Err(format!(
            "--max-connections {asked} needs more file descriptors than the limit of \
             {fd_limit} leaves room for (at most {room})"
        )),
        Some(asked) => Ok(asked),
        None if room == 0 => Err(format!(
            "the open-file limit of {fd_limit} leaves no room for connections"
        )),
        None => Ok(DEFAULT_MAX_CONNECTIONS.min(room)),
    }
}

/// Binds `address`, saying which option asked for it if it cannot.
async fn bind(address: SocketAddr, option: &str) -> Result<(TcpListener, SocketAddr), String> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|e| format!("{option}: cannot listen on {address}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((listener, bound))
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

/// The token service's routes with its limits and counting around them:
/// counted first, then timed, then rate-limited.
fn token_app(
    matcher: Arc<Matcher>,
    options: &Options,
    monitor: &Arc<Monitor>,
) -> Result<Router, String> {
    let rate_limits = Arc::new(RateLimits::new(
        &options.limits,
        Arc::clone(&matcher),
        Arc::clone(monitor),
    )?);
    rate_limits.spawn_pruner();
    Ok(router(matcher)
        .layer(from_fn_with_state(rate_limits, limit_rates))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            options.limits.request_timeout,
        ))
        .layer(from_fn_with_state(Arc::clone(monitor), count_answers)))
}

/// Runs the matcher `options` describe until Ctrl-C or SIGTERM; what went
/// wrong at start, in words.
pub async fn run(options: &Options) -> Result<(), String> {
    let matcher = Arc::new(options.load()?);
    let limits = &options.limits;
    let fd_limit = raise_fd_limit();
    let max_connections = connection_cap(limits.max_connections, fd_limit)?;
    let metrics = Arc::new(Metrics::new());
    let monitor = Arc::new(Monitor::new(
        "",
        Arc::clone(&metrics),
        limits.limit_log_interval,
    ));
    let app = token_app(matcher, options, &monitor)?;
    let (listener, address) = bind(options.listen, "--listen").await?;
    let metrics_listener = match options.metrics {
        Some(address) => Some(bind(address, "--metrics").await?),
        None => None,
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on http://{address}");
    if let Some((_, address)) = &metrics_listener {
        let _ = writeln!(stdout, "metrics on http://{address}/metrics");
    }
    let _ = stdout.flush();
    eprintln!(
        "matcher: at most {max_connections} connections (open-file limit {fd_limit}); \
         timeouts: header {:?}, idle {:?}, request {:?}; rate per source {}/s, per secret {}/s \
         (0: unlimited)",
        limits.header_read_timeout,
        limits.idle_timeout,
        limits.request_timeout,
        limits.rate_per_source,
        limits.rate_per_secret,
    );
    monitor.spawn_flusher();

    let connection_limits = ConnectionLimits {
        header_read_timeout: limits.header_read_timeout,
        idle_timeout: limits.idle_timeout,
        shutdown_grace: limits.request_timeout,
    };
    let (stop, stop_seen) = watch::channel(false);
    tokio::spawn(async move {
        stop_signal().await;
        let _ = stop.send(true);
    });
    let metrics_server = metrics_listener.map(|(listener, _)| {
        // Its own counts go nowhere: the metrics are the token listener's.
        let own = Arc::new(Monitor::new(
            "metrics listener",
            Arc::new(Metrics::new()),
            limits.limit_log_interval,
        ));
        own.spawn_flusher();
        tokio::spawn(serve(
            listener,
            metrics_router(Arc::clone(&metrics)),
            Slots::new(METRICS_MAX_CONNECTIONS),
            connection_limits,
            own,
            stopped(stop_seen.clone()),
        ))
    });
    serve(
        listener,
        app,
        Slots::new(max_connections),
        connection_limits,
        monitor,
        stopped(stop_seen),
    )
    .await;
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
        assert_eq!(connection_cap(None, 1 << 20), Ok(DEFAULT_MAX_CONNECTIONS));
        assert_eq!(connection_cap(None, 1024), Ok(1024 - 128 - 16));
        assert_eq!(connection_cap(Some(10), 1024), Ok(10));
        assert_eq!(connection_cap(Some(880), 1024), Ok(880));
        assert!(connection_cap(Some(881), 1024).is_err());
        assert!(connection_cap(Some(0), 1024).is_err());
        assert!(connection_cap(None, 100).is_err());
    }
}
