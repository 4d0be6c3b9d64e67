//! What the host writes to the [`log`] facade, and the limits that keep a
//! flood of bad datagrams from flooding the log.
//!
//! The protocol core is silent: what it knows reaches the host as events,
//! counters and the `Output::dropped` hook, and the host logs here
//! (target `netcode`):
//!
//! * `info`: a server starting and stopping, clients connecting and
//!   disconnecting (with the reason), a client's state changes;
//! * `info`: a refused connection attempt (a connection request or
//!   response the server turned down) with its sender and the reason in
//!   words, at most once per second per sender and reason, and at most
//!   [`REFUSALS_PER_SECOND`] such lines a second in all;
//! * `warn`: a client whose connection attempt failed, with the server
//!   addresses it tried; times passed to `update` that break the clock's
//!   rule (see `MAX_TIME_STEP`), at most once a second;
//! * `debug`: every other dropped datagram with its reason and sender, at
//!   most [`DROPS_PER_REASON_PER_SECOND`] a second for each reason, then
//!   one line a second saying how many more were dropped.
//!
//! Nothing is formatted unless the level is enabled, so logging costs a
//! level check per event when it is off.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use netcode_proto::PacketType;
use netcode_proto::packet::PacketError;
use netcode_proto::stats::{DropReason, DroppedDatagram};

use crate::time::{HostTime, TimeAnomaly};

/// The target every line of this crate is logged under.
pub(crate) const TARGET: &str = "netcode";

/// Dropped datagrams logged per reason per second, at `debug`.
pub(crate) const DROPS_PER_REASON_PER_SECOND: u32 = 4;

/// Refused connection attempts logged per second in all, at `info`.
pub(crate) const REFUSALS_PER_SECOND: u32 = 16;

/// Senders remembered for the once-per-second-per-sender rule.
const RECENT_REFUSALS: usize = 64;

const SECOND: Duration = Duration::from_secs(1);

/// The rate limits of one client's or server's drop log.
#[derive(Debug)]
pub(crate) struct DropLog {
    /// Start of the current one-second window.
    window: Option<Instant>,
    /// Drops logged (up to the limit) and seen, per reason, this window.
    seen: [u32; DropReason::COUNT],
    refusals: u32,
    /// Recent refusals: sender and reason, and when last logged.
    recent: [Option<(SocketAddr, DropReason, Instant)>; RECENT_REFUSALS],
    /// When a time anomaly was last logged.
    clock_logged: Option<Instant>,
    /// When a token history failure was last logged, and how many were
    /// held back since.
    history_logged: Option<(Instant, u32)>,
}

impl DropLog {
    pub(crate) fn new() -> Self {
        Self {
            window: None,
            seen: [0; DropReason::COUNT],
            refusals: 0,
            recent: [None; RECENT_REFUSALS],
            clock_logged: None,
            history_logged: None,
        }
    }

    /// Logs one dropped datagram, within the limits, as a server (which
    /// refuses connection attempts) or a client.
    pub(crate) fn dropped(&mut self, dropped: DroppedDatagram, server: bool) {
        // Nothing below Info is ever logged here: with the logger's level
        // under it (as in a quiet server), a drop costs one load.
        if log::max_level() < log::LevelFilter::Info {
            return;
        }
        if server && is_refusal(&dropped) && log::log_enabled!(target: TARGET, log::Level::Info) {
            self.refused(dropped);
        } else if log::log_enabled!(target: TARGET, log::Level::Debug) {
            self.other_drop(dropped);
        }
    }

    /// Starts a new window once a second has passed, first summing up what
    /// the last one held back.
    fn roll(&mut self, now: Instant) {
        if self
            .window
            .is_some_and(|start| now.duration_since(start) < SECOND)
        {
            return;
        }
        for (index, seen) in self.seen.iter().enumerate() {
            let more = seen.saturating_sub(DROPS_PER_REASON_PER_SECOND);
            if let (true, Some(reason)) = (more > 0, DropReason::from_index(index)) {
                log::debug!(target: TARGET, "{more} more datagrams dropped ({reason}) in the last second");
            }
        }
        self.window = Some(now);
        self.seen = [0; DropReason::COUNT];
        self.refusals = 0;
    }

    fn other_drop(&mut self, d: DroppedDatagram) {
        self.roll(Instant::now());
        let seen = &mut self.seen[d.reason.index()];
        *seen = seen.saturating_add(1);
        if *seen <= DROPS_PER_REASON_PER_SECOND {
            let kind = d.packet_type.map_or("datagram", PacketType::name);
            log::debug!(target: TARGET, "dropped {kind} from {}: {}", d.from, d.reason);
        }
    }

    fn refused(&mut self, d: DroppedDatagram) {
        let now = Instant::now();
        self.roll(now);
        let slot = recent_slot(&d.from, d.reason);
        if let Some((from, reason, at)) = self.recent[slot]
            && from == d.from
            && reason == d.reason
            && now.duration_since(at) < SECOND
        {
            return;
        }
        if self.refusals >= REFUSALS_PER_SECOND {
            return;
        }
        self.refusals += 1;
        self.recent[slot] = Some((d.from, d.reason, now));
        log::info!(target: TARGET, "refused connection from {}: {}", d.from, refusal_text(d.reason));
    }

    /// Logs a time anomaly, at most once a second.
    pub(crate) fn clock(&mut self, time: HostTime, anomaly: TimeAnomaly) {
        if !log::log_enabled!(target: TARGET, log::Level::Warn) {
            return;
        }
        let now = Instant::now();
        if self
            .clock_logged
            .is_some_and(|at| now.duration_since(at) < SECOND)
        {
            return;
        }
        self.clock_logged = Some(now);
        let what = match anomaly {
            TimeAnomaly::NotFinite => "is not finite: ignored",
            TimeAnomaly::Backward => "is earlier than the previous one: the clock stood still",
            TimeAnomaly::Jump => "jumps forward more than MAX_TIME_STEP: counted as that",
        };
        match time {
            HostTime::Seconds(seconds) => {
                log::warn!(target: TARGET, "update time {seconds} {what}");
            }
            HostTime::Instant(instant) => {
                log::warn!(target: TARGET, "update instant {instant:?} {what}");
            }
        }
    }
}

impl DropLog {
    /// Logs a failure of the token history file (a write, a sync, a
    /// compaction, or a writer too far behind), at most once a second,
    /// with how many were held back since the last line.
    pub(crate) fn history_failure(&mut self, path: &std::path::Path, what: &dyn std::fmt::Display) {
        let now = Instant::now();
        match &mut self.history_logged {
            Some((at, held)) if now.duration_since(*at) < SECOND => {
                *held = held.saturating_add(1);
                return;
            }
            _ => {}
        }
        let held = self.history_logged.map_or(0, |(_, held)| held);
        self.history_logged = Some((now, 0));
        let more = match held {
            0 => String::new(),
            n => format!(" ({n} more failures in the last second)"),
        };
        log::warn!(
            target: TARGET,
            "token history file {}: {what}; tokens not recorded are refused until they are{more}",
            path.display()
        );
    }
}

/// A slot of the recent-refusals table for a sender and reason.
fn recent_slot(from: &SocketAddr, reason: DropReason) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one((from, reason.index()));
    (hash % RECENT_REFUSALS as u64) as usize
}

/// Whether a drop turned down a connection attempt: a well-formed
/// connection request or response the server would not accept, as opposed
/// to malformed or stray traffic.
fn is_refusal(d: &DroppedDatagram) -> bool {
    let attempt = matches!(
        d.packet_type,
        Some(PacketType::Request | PacketType::Response)
    );
    // Malformed or stray traffic is not an attempt turned down, and a
    // request held until its token's record is durable is waiting, not
    // refused.
    let not_refused = matches!(
        d.reason,
        DropReason::Packet(
            PacketError::TooSmall
                | PacketError::TypeNotAccepted
                | PacketError::RequestWrongSize
                | PacketError::InvalidType
                | PacketError::InvalidSequenceBytes
                | PacketError::WrongBodySize
        ) | DropReason::NotRunning
            | DropReason::TokenNotDurable
    );
    attempt && !not_refused
}

/// Why a connection attempt was refused, in words an operator can act on.
fn refusal_text(reason: DropReason) -> &'static str {
    match reason {
        DropReason::Packet(PacketError::VersionMismatch) => {
            "its version info is not \"NETCODE 1.02\""
        }
        DropReason::Packet(PacketError::ProtocolMismatch) => "its protocol id is not this server's",
        DropReason::Packet(PacketError::TokenExpired) => {
            "its connect token has expired (are the backend's and the server's clocks in step?)"
        }
        DropReason::Packet(PacketError::TokenPredatesStart) => {
            "its connect token may have been issued in or before the second this server started (the restart rule: the client needs a token issued later)"
        }
        DropReason::Packet(PacketError::DecryptFailed) => {
            "its private connect token does not decrypt: the backend's private key or protocol id is not this server's, or the token was altered"
        }
        DropReason::Packet(PacketError::InvalidPrivateToken) => {
            "its private connect token decrypts but is malformed"
        }
        DropReason::Packet(PacketError::NoKey) => {
            "a connection response from an address with no pending request (expired, or never sent)"
        }
        DropReason::Packet(PacketError::Replayed) => "a replayed packet",
        DropReason::ServerAddressNotInToken => {
            "its connect token does not list this server's public address"
        }
        DropReason::AddressAlreadyConnected => "a client is already connected from that address",
        DropReason::ClientIdAlreadyConnected => "a client with its client id is already connected",
        DropReason::TokenAlreadyUsed => "its connect token was already used",
        DropReason::TokenHistoryFull => {
            "the token history is full of unexpired tokens (more tokens per lifetime than it holds)"
        }
        DropReason::MappingTableFull => "no room for another pending connection",
        DropReason::ChallengeTokenInvalid => {
            "its challenge token does not decrypt (sent before this server's last start?)"
        }
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop_of(packet_type: PacketType, reason: DropReason) -> DroppedDatagram {
        DroppedDatagram {
            from: "10.0.0.1:5000".parse().unwrap(),
            packet_type: Some(packet_type),
            reason,
        }
    }

    #[test]
    fn refusals_are_well_formed_attempts_turned_down() {
        let decrypt = DropReason::Packet(PacketError::DecryptFailed);
        assert!(is_refusal(&drop_of(PacketType::Request, decrypt)));
        assert!(is_refusal(&drop_of(
            PacketType::Request,
            DropReason::TokenAlreadyUsed
        )));
        assert!(!is_refusal(&drop_of(PacketType::Payload, decrypt)));
        assert!(!is_refusal(&drop_of(
            PacketType::Request,
            DropReason::Packet(PacketError::RequestWrongSize)
        )));
    }
}
