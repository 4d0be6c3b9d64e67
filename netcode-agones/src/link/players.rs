//! Player tracking through the beta Counters and Lists API: each connected
//! client's id (in decimal) is a value of the GameServer's list (by
//! default `players`, which the GameServer spec must declare with a
//! capacity).
//!
//! The loop says who is connected; what the sidecar has confirmed is kept
//! apart, and the two are reconciled: at once after each change, and again
//! after a failure once the sidecar answers (a player who joined while it
//! was away is added then). Failures never reach the game: they are
//! counted and logged. A list that does not exist, or an API that is not
//! there (the CountsAndLists feature off), turns tracking off for good
//! with one warning; a full list leaves that player out, with a warning,
//! until a player leaves and makes room. The sidecar's refusals are read
//! in `list_answer.rs`.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agones::Sdk;

use super::list_answer::{ListRefusal, read_refusal};
use super::shared::Shared;
use crate::TARGET;
use crate::error::describe;

/// What a failed call means for the tracking.
enum Failure {
    /// The sidecar is away or busy: try again later.
    Transient(String),
    /// This value can never be added (the list is full).
    Refused(String),
    /// The list or the API is not there: stop tracking.
    Permanent(String),
}

/// The players list of one server.
#[derive(Debug)]
pub(crate) struct Players {
    /// The list's name; `None`: tracking is off.
    list: Option<String>,
    /// Who is connected, as the loop reported.
    wanted: BTreeSet<String>,
    /// Who the sidecar confirmed in the list.
    confirmed: BTreeSet<String>,
    /// Who the sidecar refused (the list was full).
    refused: BTreeSet<String>,
    /// Whether the last reconciliation stopped on a failure.
    dirty: bool,
}

impl Players {
    /// Tracking in the list `list` (`None`: no tracking).
    pub(crate) fn new(list: Option<String>) -> Self {
        Self {
            list,
            wanted: BTreeSet::new(),
            confirmed: BTreeSet::new(),
            refused: BTreeSet::new(),
            dirty: false,
        }
    }

    /// Records that client `id` joined (`true`) or left.
    pub(crate) fn set(&mut self, id: u64, present: bool) {
        let id = id.to_string();
        if present {
            self.wanted.insert(id);
        } else {
            self.refused.remove(&id);
            self.wanted.remove(&id);
        }
    }

    /// Whether a reconciliation failed and should be tried again.
    pub(crate) fn needs_retry(&self) -> bool {
        self.dirty && self.list.is_some()
    }

    /// Brings the sidecar's list in line with who is connected: removals
    /// first (they make room, and a player left out of a full list is
    /// tried again once one is made), then additions. Stops at the first
    /// transient failure and leaves the rest for a retry.
    pub(crate) async fn reconcile(&mut self, sdk: &Sdk, shared: &Shared, timeout: Duration) {
        let Some(list) = self.list.clone() else {
            return;
        };
        self.dirty = false;
        let mut beta = sdk.beta().clone();
        let leaving: Vec<String> = self.confirmed.difference(&self.wanted).cloned().collect();
        for id in leaving {
            let call = beta.delete_list_value(&list, &id);
            let result = match answer(tokio::time::timeout(timeout, call).await) {
                // Already gone counts as done.
                Ok(()) | Err(Refusal::Read(ListRefusal::ValueMissing, _)) => Ok(()),
                Err(refusal) => Err(refusal.failure()),
            };
            match result {
                Ok(()) => {
                    self.confirmed.remove(&id);
                    self.refused.clear();
                    shared.sidecar_answered();
                }
                Err(failure) => {
                    if self.fail(failure, &id, shared) {
                        break;
                    }
                }
            }
        }
        let joining: Vec<String> = (self.wanted.difference(&self.confirmed))
            .filter(|id| !self.refused.contains(*id))
            .cloned()
            .collect();
        for id in joining {
            if self.dirty || self.list.is_none() {
                break;
            }
            let call = beta.append_list_value(&list, &id);
            let result = match answer(tokio::time::timeout(timeout, call).await) {
                // Already there counts as done.
                Ok(()) | Err(Refusal::Read(ListRefusal::ValueExists, _)) => Ok(()),
                // The sidecar checks the capacity before duplicates: a
                // value added by a call whose answer was lost is refused
                // as "full" when the list is. Its values say.
                Err(Refusal::Read(ListRefusal::Full, why)) => {
                    let values = beta.get_list_values(&list);
                    match tokio::time::timeout(timeout, values).await {
                        Ok(Ok(values)) if values.contains(&id) => Ok(()),
                        _ => Err(Failure::Refused(why)),
                    }
                }
                // A missing list (NOT_FOUND on an add says so).
                Err(Refusal::Read(ListRefusal::ValueMissing, why)) => Err(Failure::Permanent(why)),
                Err(refusal) => Err(refusal.failure()),
            };
            match result {
                Ok(()) => {
                    self.confirmed.insert(id);
                    shared.sidecar_answered();
                }
                Err(failure) => {
                    if self.fail(failure, &id, shared) {
                        break;
                    }
                }
            }
        }
        self.publish(shared);
    }

    /// Handles a failed call for player `id`; returns whether to stop.
    fn fail(&mut self, failure: Failure, id: &str, shared: &Shared) -> bool {
        shared.sdk_calls_failed.fetch_add(1, Ordering::Relaxed);
        match failure {
            Failure::Transient(why) => {
                shared.sidecar_lost(&why);
                self.dirty = true;
                true
            }
            Failure::Refused(why) => {
                log::warn!(
                    target: TARGET,
                    "player {id} left out of the players list: {why}"
                );
                self.refused.insert(id.to_owned());
                false
            }
            Failure::Permanent(why) => {
                shared.sidecar_answered();
                log::warn!(
                    target: TARGET,
                    "player tracking turned off (the GameServer needs a list {:?} and \
                     the CountsAndLists feature): {why}",
                    self.list.as_deref().unwrap_or_default()
                );
                self.list = None;
                shared.player_tracking_off.store(true, Ordering::Relaxed);
                true
            }
        }
    }

    /// Publishes the tracked and pending counts.
    fn publish(&self, shared: &Shared) {
        let joining = (self.wanted.difference(&self.confirmed))
            .filter(|id| !self.refused.contains(*id))
            .count();
        let leaving = self.confirmed.difference(&self.wanted).count();
        let pending = if self.list.is_some() {
            joining + leaving
        } else {
            0
        };
        shared
            .players_tracked
            .store(self.confirmed.len(), Ordering::Relaxed);
        shared.players_pending.store(pending, Ordering::Relaxed);
    }
}

/// A list call that did not succeed.
enum Refusal {
    /// No answer in time.
    Late,
    /// An answer other than a gRPC status (the connection failed).
    Broken(String),
    /// The sidecar refused: what it means, and its words.
    Read(ListRefusal, String),
}

impl Refusal {
    /// What it means for the tracking, when the call has no reading of
    /// its own for it.
    fn failure(self) -> Failure {
        match self {
            Self::Late => Failure::Transient("no answer in time".into()),
            Self::Broken(why) => Failure::Transient(why),
            Self::Read(ListRefusal::ListMissing | ListRefusal::Unavailable, why) => {
                Failure::Permanent(why)
            }
            Self::Read(ListRefusal::Full, why) => Failure::Refused(why),
            Self::Read(_, why) => Failure::Transient(why),
        }
    }
}

/// A list call's result, its refusal read.
fn answer(
    result: Result<agones::errors::Result<()>, tokio::time::error::Elapsed>,
) -> Result<(), Refusal> {
    let error = match result {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(error)) => error,
        Err(_) => return Err(Refusal::Late),
    };
    let why = describe(&error);
    match &error {
        agones::errors::Error::Rpc(status) => Err(Refusal::Read(
            read_refusal(status.code(), status.message()),
            why,
        )),
        _ => Err(Refusal::Broken(why)),
    }
}
