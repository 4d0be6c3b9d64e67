//! What the demo knows about its clients: who holds each slot, over which
//! transport, how many of their payloads were intact or wrong, who left
//! and why, and what the pages reported. `GET /status` shows it as JSON.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};

use netcode_tokio::ServerEvent;
use netcode_tokio::netcode_std::transport::is_virtual;
use netcode_webtransport::BrowserTransport;
use serde_json::{Value, json};

/// Page reports kept at most (the newest).
const MAX_PAGES: usize = 64;

/// One connected client.
#[derive(Debug, Clone)]
struct Connected {
    client_id: u64,
    transport: &'static str,
    intact: u64,
    wrong: u64,
}

/// The demo's view of its clients.
#[derive(Debug, Default)]
pub(crate) struct Status {
    slots: BTreeMap<usize, Connected>,
    departed: Vec<Value>,
    pages: BTreeMap<String, Value>,
    wrong_total: u64,
    intact_total: u64,
}

/// The status, whether or not a task panicked holding it.
pub(crate) fn lock(status: &Mutex<Status>) -> MutexGuard<'_, Status> {
    status.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `data` is a demo payload: byte i is `i % 256`, any length the
/// sender's transport carries (a browser's session carries less than
/// 1200 bytes).
pub(crate) fn is_demo_payload(data: &[u8]) -> bool {
    !data.is_empty() && data.iter().enumerate().all(|(i, b)| *b == (i % 256) as u8)
}

/// The transport's name: `browser`'s door for a virtual peer, else UDP.
fn transport(address: Option<SocketAddr>, browser: Option<BrowserTransport>) -> &'static str {
    match (address, browser) {
        (Some(address), Some(door)) if is_virtual(&address) => door.name(),
        _ => "udp",
    }
}

impl Status {
    /// Counts a payload from `slot`.
    pub(crate) fn check(&mut self, slot: usize, data: &[u8]) {
        let Some(client) = self.slots.get_mut(&slot) else {
            return;
        };
        if is_demo_payload(data) {
            client.intact += 1;
            self.intact_total += 1;
        } else {
            client.wrong += 1;
            self.wrong_total += 1;
        }
    }

    /// Follows a connect or disconnect (`browser`: the door a connecting
    /// browser came in by); the line to print for it.
    pub(crate) fn apply(
        &mut self,
        event: &ServerEvent,
        browser: Option<BrowserTransport>,
    ) -> Option<String> {
        match *event {
            ServerEvent::ClientConnected {
                client_index,
                client_id,
                address,
            } => {
                let transport = transport(address, browser);
                self.slots.insert(
                    client_index,
                    Connected {
                        client_id,
                        transport,
                        intact: 0,
                        wrong: 0,
                    },
                );
                Some(format!(
                    "client {client_index} connected over {transport} (id {client_id:016x})"
                ))
            }
            ServerEvent::ClientDisconnected {
                client_index,
                client_id,
                reason,
                ..
            } => {
                let left = self.slots.remove(&client_index)?;
                self.departed.push(json!({
                    "slot": client_index,
                    "client_id": client_id,
                    "transport": left.transport,
                    "intact": left.intact,
                    "wrong": left.wrong,
                    "reason": reason.to_string(),
                }));
                Some(format!(
                    "client {client_index} over {} disconnected ({reason}); {} intact, {} wrong",
                    left.transport, left.intact, left.wrong
                ))
            }
        }
    }

    /// Keeps the latest report of page `page`.
    pub(crate) fn report(&mut self, page: String, report: Value) {
        if !self.pages.contains_key(&page) && self.pages.len() >= MAX_PAGES {
            return;
        }
        self.pages.insert(page, report);
    }

    /// `GET /status`'s answer.
    pub(crate) fn to_json(&self) -> Value {
        let clients: Vec<Value> = self
            .slots
            .iter()
            .map(|(slot, c)| {
                json!({
                    "slot": slot,
                    "client_id": c.client_id,
                    "transport": c.transport,
                    "intact": c.intact,
                    "wrong": c.wrong,
                })
            })
            .collect();
        json!({
            "clients": clients,
            "departed": self.departed,
            "pages": self.pages,
        })
    }

    /// The last line of a run.
    pub(crate) fn summary(&self) -> String {
        format!(
            "payloads received: {} intact, {} wrong; {} clients left, {} connected at the end",
            self.intact_total,
            self.wrong_total,
            self.departed.len(),
            self.slots.len()
        )
    }

    /// A run is good if no payload was wrong.
    pub(crate) fn verdict(&self) -> Result<(), String> {
        match self.wrong_total {
            0 => Ok(()),
            wrong => Err(format!("{wrong} payloads were wrong")),
        }
    }
}
