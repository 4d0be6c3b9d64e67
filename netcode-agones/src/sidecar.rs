//! Reaching the Agones SDK server (the sidecar beside the game server's
//! container) within a time limit of our choosing.
//!
//! `agones::Sdk::new` tries every 100 ms for a hard-coded 30 s; here it is
//! wrapped in the caller's limit (and called again while the limit lasts
//! when that is longer than 30 s), so a server whose sidecar never appears
//! gives up when it was told to, with an error that says so, and a sidecar
//! that starts late is still picked up.

use std::time::Duration;

use agones::Sdk;
use tokio::time::Instant;

use crate::error::StartError;

/// The SDK's port when `AGONES_SDK_GRPC_PORT` is unset, as the SDK has it.
pub const DEFAULT_SDK_PORT: u16 = 9357;

/// The port the SDK will use for `port`: the given one, else
/// `AGONES_SDK_GRPC_PORT`, else 9357, read as the SDK reads it (an
/// unparsable variable silently means 9357 there too). For messages.
pub fn sdk_port(port: Option<u16>) -> u16 {
    port.unwrap_or_else(|| {
        std::env::var("AGONES_SDK_GRPC_PORT")
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(DEFAULT_SDK_PORT)
    })
}

/// Connects to the sidecar on localhost at `port` (`None`: the SDK's own
/// choice, from `AGONES_SDK_GRPC_PORT`), waiting at most `timeout` for it
/// to answer. [`StartError::SidecarUnreachable`] when it never does.
pub async fn connect(port: Option<u16>, timeout: Duration) -> Result<Sdk, StartError> {
    let started = Instant::now();
    let deadline = started + timeout;
    let unreachable = || StartError::SidecarUnreachable {
        port: sdk_port(port),
        waited: started.elapsed(),
    };
    loop {
        match tokio::time::timeout_at(deadline, Sdk::new(port, None)).await {
            Ok(Ok(sdk)) => {
                log::info!(
                    target: crate::TARGET,
                    "connected to the Agones SDK on localhost:{} after {:.1} s",
                    sdk_port(port),
                    started.elapsed().as_secs_f64()
                );
                return Ok(sdk);
            }
            // The SDK's own 30 s ran out before ours: try again.
            Ok(Err(agones::errors::Error::TimedOut(_))) => {}
            Ok(Err(error)) => {
                return Err(StartError::sdk("connect", error));
            }
            Err(_) => return Err(unreachable()),
        }
        if Instant::now() >= deadline {
            return Err(unreachable());
        }
        log::debug!(
            target: crate::TARGET,
            "still no Agones SDK on localhost:{}",
            sdk_port(port)
        );
    }
}
