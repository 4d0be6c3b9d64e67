//! The SDK's side of the link, on the tokio runtime: the agent task, which
//! makes the calls the game loop asks for (player tracking) and re-opens
//! the health stream after the sidecar went away; and the watch task,
//! which follows the GameServer for its state (`Allocated`).
//!
//! Neither ever ends the match: failures are counted, logged and retried
//! every retry period, while the game loop serves its players.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agones::Sdk;
use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;

use super::players::Players;
use super::shared::{Shared, lock};
use crate::TARGET;
use crate::error::describe;

/// What the game loop asks of the agent.
#[derive(Debug)]
pub(crate) enum Command {
    /// A client connected (its id).
    PlayerJoined(u64),
    /// A client disconnected (its id).
    PlayerLeft(u64),
    /// The loop found the health stream closed.
    HealthLost,
}

/// How the agent works.
#[derive(Debug, Clone)]
pub(crate) struct AgentConfig {
    /// The players list (`None`: no tracking).
    pub(crate) players_list: Option<String>,
    /// How often failed work is tried again.
    pub(crate) retry_period: Duration,
    /// How long one SDK call may take.
    pub(crate) call_timeout: Duration,
}

/// Runs the agent until the link is dropped (the command channel closes).
pub(crate) async fn run_agent(
    mut sdk: Sdk,
    shared: Arc<Shared>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    config: AgentConfig,
) {
    let mut players = Players::new(config.players_list.clone());
    let mut retry = tokio::time::interval(config.retry_period);
    retry.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let mut players_changed = false;
        tokio::select! {
            command = commands.recv() => match command {
                None => return,
                Some(command) => players_changed |= apply(&mut players, command),
            },
            _ = retry.tick() => {}
        }
        // Every command waiting is taken before the calls are made.
        while let Ok(command) = commands.try_recv() {
            players_changed |= apply(&mut players, command);
        }
        if lock(&shared.health).is_none() {
            reopen_health(&mut sdk, &shared, config.call_timeout).await;
        }
        if players_changed || players.needs_retry() {
            players.reconcile(&sdk, &shared, config.call_timeout).await;
        }
    }
}

/// Takes in `command`; returns whether the players changed.
fn apply(players: &mut Players, command: Command) -> bool {
    match command {
        Command::PlayerJoined(id) => players.set(id, true),
        Command::PlayerLeft(id) => players.set(id, false),
        Command::HealthLost => return false,
    }
    true
}

/// Opens a new health stream if the sidecar answers (a stream opened while
/// it is away would only close again): the SDK's stream does not survive
/// the sidecar going away, and `health_check` must be called again.
async fn reopen_health(sdk: &mut Sdk, shared: &Shared, timeout: Duration) {
    match tokio::time::timeout(timeout, sdk.get_gameserver()).await {
        Ok(Ok(gameserver)) => {
            shared.observe(&gameserver);
            *lock(&shared.health) = Some(sdk.health_check());
            let opened = shared.health_streams_opened.fetch_add(1, Ordering::Relaxed) + 1;
            shared.sidecar_answered();
            log::info!(target: TARGET, "health stream open again ({opened} opened so far)");
        }
        Ok(Err(error)) => {
            shared.sdk_calls_failed.fetch_add(1, Ordering::Relaxed);
            shared.sidecar_lost(&describe(&error));
        }
        Err(_) => {
            shared.sdk_calls_failed.fetch_add(1, Ordering::Relaxed);
            shared.sidecar_lost("GetGameServer: no answer in time");
        }
    }
}

/// Follows the GameServer: each state the watch streams, and the current
/// one read when the watch (re)starts, since a change made while it was
/// down would otherwise be missed. A watch that ends is started again
/// after `retry_period`.
pub(crate) async fn run_watch(mut sdk: Sdk, shared: Arc<Shared>, retry_period: Duration) {
    loop {
        match sdk.watch_gameserver().await {
            Ok(mut stream) => {
                if let Ok(gameserver) = sdk.get_gameserver().await {
                    shared.observe(&gameserver);
                }
                loop {
                    match stream.message().await {
                        Ok(Some(gameserver)) => shared.observe(&gameserver),
                        Ok(None) => {
                            log::debug!(target: TARGET, "the GameServer watch ended");
                            break;
                        }
                        Err(status) => {
                            log::debug!(
                                target: TARGET,
                                "the GameServer watch failed: {:?}: {}",
                                status.code(),
                                status.message()
                            );
                            break;
                        }
                    }
                }
            }
            Err(error) => {
                log::debug!(
                    target: TARGET,
                    "cannot watch the GameServer: {}",
                    describe(&error)
                );
            }
        }
        shared.watch_restarts.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(retry_period).await;
    }
}
