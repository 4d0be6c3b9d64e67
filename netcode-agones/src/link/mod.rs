//! The game loop's link to the Agones sidecar: health pings sent from the
//! loop itself, players reported as they come and go, the allocation seen
//! on the GameServer watch, and the final Shutdown.
//!
//! The loop never waits for the SDK. A ping is a non-blocking send on the
//! SDK's health stream, made from [`Link::tick`] when the health period
//! has passed by the loop's own clock: a loop that stalls stops pinging,
//! and Agones marks the server Unhealthy, as it should. Player changes go
//! to the agent task (`agent.rs`), which makes the calls on the runtime.
//!
//! When the sidecar goes away the health stream closes; the next ping
//! finds it closed, and the agent opens a new one once the sidecar answers
//! again (the SDK needs `health_check` called anew). Meanwhile the
//! players are served as before; [`LinkStats`] and the log say what
//! happened.

mod agent;
mod list_answer;
mod players;
mod shared;

pub use shared::LinkStats;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use agones::Sdk;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::task::JoinHandle;

use crate::TARGET;
use crate::error::describe;
use agent::{AgentConfig, Command, run_agent, run_watch};
use shared::{Shared, lock};

/// How soon a Shutdown that failed is tried again.
const SHUTDOWN_RETRY: Duration = Duration::from_millis(200);

/// How the link works; the defaults suit Agones' own (a health check
/// every 5 s, 3 failures allowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOptions {
    /// How often the loop pings (default 1 s).
    pub health_period: Duration,
    /// The players list of the GameServer (default `players`); `None`
    /// tracks no players.
    pub players_list: Option<String>,
    /// How often work that failed is tried again: the players list, the
    /// health stream, the watch (default 1 s).
    pub retry_period: Duration,
    /// How long one SDK call may take before it counts as failed
    /// (default 5 s).
    pub call_timeout: Duration,
}

impl Default for LinkOptions {
    fn default() -> Self {
        Self {
            health_period: Duration::from_secs(1),
            players_list: Some("players".into()),
            retry_period: Duration::from_secs(1),
            call_timeout: Duration::from_secs(5),
        }
    }
}

/// Why the Shutdown call did not go through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Shutdown not acknowledged after {attempts} attempt(s): {last}")]
pub struct ShutdownError {
    /// Calls made.
    pub attempts: u32,
    /// What the last one got.
    pub last: String,
}

/// The game loop's side of the link to the sidecar. Made with
/// [`Link::start`] inside a tokio runtime, whose tasks then make the SDK
/// calls; its methods are called from the game loop, on any thread, and
/// never block. Dropping it stops those tasks.
pub struct Link {
    sdk: Sdk,
    shared: Arc<Shared>,
    commands: mpsc::UnboundedSender<Command>,
    health_period: Duration,
    last_ping: Option<Instant>,
    tasks: Vec<JoinHandle<()>>,
}

impl Link {
    /// Opens the health stream and starts the agent and watch tasks on the
    /// current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, as `tokio::spawn` does.
    pub fn start(sdk: Sdk, options: LinkOptions) -> Self {
        let shared = Arc::new(Shared::connected());
        *lock(&shared.health) = Some(sdk.health_check());
        shared.health_streams_opened.store(1, Ordering::Relaxed);
        let (commands, received) = mpsc::unbounded_channel();
        let config = AgentConfig {
            players_list: options.players_list.clone(),
            retry_period: options.retry_period,
            call_timeout: options.call_timeout,
        };
        let tasks = vec![
            tokio::spawn(run_agent(sdk.clone(), shared.clone(), received, config)),
            tokio::spawn(run_watch(sdk.clone(), shared.clone(), options.retry_period)),
        ];
        Self {
            sdk,
            shared,
            commands,
            health_period: options.health_period,
            last_ping: None,
            tasks,
        }
    }

    /// The game loop's turn at `now` (its own clock): pings when the health
    /// period has passed since the last ping. Returns whether it pinged.
    pub fn tick(&mut self, now: Instant) -> bool {
        let due = self
            .last_ping
            .is_none_or(|last| now.saturating_duration_since(last) >= self.health_period);
        if due {
            self.last_ping = Some(now);
            self.ping();
        }
        due
    }

    /// Sends one health ping now, without waiting: handed to the health
    /// stream, or counted as missed when none is open (or its buffer is
    /// full). A closed stream is noted and the agent told to open a new
    /// one.
    pub fn ping(&self) {
        let mut health = lock(&self.shared.health);
        let sent = match health.as_ref().map(|sender| sender.try_send(())) {
            Some(Ok(())) => true,
            Some(Err(TrySendError::Full(()))) | None => false,
            Some(Err(TrySendError::Closed(()))) => {
                *health = None;
                drop(health);
                self.shared
                    .health_streams_lost
                    .fetch_add(1, Ordering::Relaxed);
                self.shared.sidecar_lost("the health stream closed");
                let _ = self.commands.send(Command::HealthLost);
                false
            }
        };
        let counter = if sent {
            &self.shared.health_pings
        } else {
            &self.shared.health_pings_missed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Reports that the client `client_id` connected: added to the
    /// players list by the agent.
    pub fn player_joined(&self, client_id: u64) {
        let _ = self.commands.send(Command::PlayerJoined(client_id));
    }

    /// Reports that the client `client_id` disconnected.
    pub fn player_left(&self, client_id: u64) {
        let _ = self.commands.send(Command::PlayerLeft(client_id));
    }

    /// When the server was first seen `Allocated` (`None`: not yet).
    pub fn allocated_at(&self) -> Option<Instant> {
        self.shared.allocated_at()
    }

    /// The link's counters and states now.
    pub fn stats(&self) -> LinkStats {
        self.shared.stats()
    }

    /// Tells Agones the server is done (`Shutdown`): tries until the
    /// sidecar acknowledges or `within` has passed.
    pub async fn shutdown(&self, within: Duration) -> Result<(), ShutdownError> {
        let deadline = tokio::time::Instant::now() + within;
        let mut sdk = self.sdk.clone();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let last = match tokio::time::timeout_at(deadline, sdk.shutdown()).await {
                Ok(Ok(())) => {
                    log::info!(target: TARGET, "Shutdown acknowledged by the sidecar");
                    return Ok(());
                }
                Ok(Err(error)) => describe(&error),
                Err(_) => "no answer in time".to_owned(),
            };
            if tokio::time::Instant::now() + SHUTDOWN_RETRY > deadline {
                return Err(ShutdownError { attempts, last });
            }
            log::debug!(target: TARGET, "Shutdown failed ({last}); trying again");
            tokio::time::sleep(SHUTDOWN_RETRY).await;
        }
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("health_period", &self.health_period)
            .field("last_ping", &self.last_ping)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
