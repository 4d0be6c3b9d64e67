//! The server examples' `--metrics ADDR`: the Prometheus figures their game
//! loop records (`netcode-metrics`) and the endpoint that serves them.

use std::io::Write;
use std::net::SocketAddr;

use netcode_metrics::{MetricsEndpoint, ServerMetrics};

/// With `--metrics ADDR` (`address`), the metrics the loop records and the
/// endpoint serving them, announced on a `metrics on http://ADDRESS/metrics`
/// line (with the bound port); `None` without it.
pub fn serve_metrics(
    address: Option<SocketAddr>,
) -> Result<Option<(ServerMetrics, MetricsEndpoint)>, String> {
    let Some(address) = address else {
        return Ok(None);
    };
    let metrics = ServerMetrics::new();
    let endpoint = MetricsEndpoint::serve(address, metrics.registry())
        .map_err(|e| format!("failed to serve metrics on {address}: {e}"))?;
    println!("metrics on http://{}/metrics", endpoint.local_addr());
    let _ = std::io::stdout().flush();
    Ok(Some((metrics, endpoint)))
}
