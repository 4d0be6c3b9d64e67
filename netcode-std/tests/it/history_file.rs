//! The token history file (`ServerConfig::token_history_file`) wired into
//! the server: after a crash, a restarted server refuses a token it had
//! used as used (not by the restart rule), accepts at once a token issued
//! before the restart (but after the file began), and starts a new file,
//! behind the restart rule, when the old one is damaged; a file holding
//! more tokens than the server's usual history sizes the history (and
//! every token is still recorded), a file too large is refused, and a
//! second server on the same file is refused.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::common::{PROTOCOL_ID, config, key, start_nowait};
use crate::memory::*;
use netcode_std::history_store::HistoryStore;
use netcode_std::proto::PacketError;
use netcode_std::proto::server::UsedToken;
use netcode_std::proto::stats::DropReason;
use netcode_std::{
    BindMode, ClientState, ConnectTokenBuilder, CreateError, MAX_RESTORED_TOKENS, Server,
    ServerConfig, unix_time,
};

/// A file path of this test's own under the system's temporary directory.
fn scratch(name: &str) -> Scratch {
    let path = std::env::temp_dir().join(format!("netcode-{name}-{}.history", std::process::id()));
    let scratch = Scratch(path);
    scratch.remove();
    scratch
}

/// A history file's path, removed with its lock file and any damaged copy
/// when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn remove(&self) {
        for suffix in ["", ".lock", ".damaged", ".new"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.remove();
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;

    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

/// The test's server config: tokens live `lifetime` seconds at most, the
/// history is kept in `file`.
fn config_with(file: Option<&PathBuf>, lifetime: u64) -> ServerConfig {
    let mut config = config();
    config.max_connect_token_lifetime = lifetime;
    config.token_history_file = file.cloned();
    config.bind_mode = BindMode::Exact;
    config
}

fn token(client_id: u64, server: SocketAddr, expire: i64) -> [u8; 2048] {
    ConnectTokenBuilder::new(PROTOCOL_ID, &key(), client_id)
        .server_addresses([server])
        .expire_seconds(expire)
        .generate()
        .unwrap()
}

/// A server on `net` at exactly `address` (a restarted one takes its
/// predecessor's port), started by `start`: the restart rule's second is
/// over when it returns, which is what the restart tests here build on.
fn server_at(net: &Net, address: &str, config: ServerConfig) -> Server<MemorySocket> {
    let mut server = Server::bind_with(address, None::<&str>, config, net.adopt()).unwrap();
    server.start(4).unwrap();
    server
}

/// Lets the server die as in a crash: its last datagrams are lost.
fn crash(net: &Net, server: Server<MemorySocket>) -> String {
    let address = server.public_address();
    net.mute(address);
    drop(server);
    address.to_string()
}

/// Runs a fresh client with `token` against `server` for a few seconds of
/// virtual time; returns its final state.
fn attempt(net: &Net, server: &mut Server<MemorySocket>, token: &[u8; 2048]) -> ClientState {
    let mut client = client(net);
    client.connect(token).unwrap();
    let mut clock = Clock(100.0);
    for _ in 0..40 {
        run(&mut clock, 1, server, &mut [&mut client], all_connected);
        wait_for_records(server, clock.0);
    }
    client.state()
}

/// Waits (in real time, at most ten seconds) until the records of the
/// server's new tokens are durable, then lets it answer their requests at
/// the virtual time `now`.
fn wait_for_records(server: &mut Server<MemorySocket>, now: f64) {
    let started = std::time::Instant::now();
    while server.token_records_pending() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "records never became durable"
        );
        std::thread::sleep(Duration::from_millis(1));
        server.update(now);
    }
}

#[test]
fn a_restarted_server_refuses_a_token_it_used_as_used() {
    for with_file in [true, false] {
        let file = scratch(&format!("used-{with_file}"));
        let file = with_file.then_some(&*file);
        let net = Net::new();
        let mut first = server_at(&net, "127.0.0.1:0", config_with(file, 30));
        let issued = unix_time();
        let used = token(1, first.public_address(), 30);
        assert_eq!(attempt(&net, &mut first, &used), ClientState::Connected);
        let address = crash(&net, first);
        // The restart rule counts whole seconds: restart a second later.
        wait_until(issued + 1);

        let net = Net::new();
        let mut second = server_at(&net, &address, config_with(file, 30));
        assert_ne!(
            attempt(&net, &mut second, &used),
            ClientState::Connected,
            "a used token connected again"
        );
        let stats = second.stats();
        let (used_drops, rule_drops) = (
            stats.dropped(DropReason::TokenAlreadyUsed),
            stats.dropped(DropReason::Packet(PacketError::TokenPredatesStart)),
        );
        if with_file {
            assert!(
                used_drops > 0 && rule_drops == 0,
                "{used_drops} {rule_drops}"
            );
        } else {
            assert!(
                used_drops == 0 && rule_drops > 0,
                "{used_drops} {rule_drops}"
            );
        }
    }
}

#[test]
fn a_token_issued_before_the_restart_is_accepted_at_once_with_the_file() {
    const LIFETIME: u64 = 3;
    for with_file in [true, false] {
        let file = scratch(&format!("fresh-{with_file}"));
        let file = with_file.then_some(&*file);
        let net = Net::new();
        let started = unix_time();
        let first = server_at(&net, "127.0.0.1:0", config_with(file, LIFETIME));
        // A token issued a second after the file began, and a second
        // before the restart.
        wait_until(started + 1);
        let issued = unix_time();
        let fresh = token(2, first.public_address(), LIFETIME as i64);
        wait_until(issued + 1);
        let address = crash(&net, first);

        let net = Net::new();
        let mut second = server_at(&net, &address, config_with(file, LIFETIME));
        let state = attempt(&net, &mut second, &fresh);
        if with_file {
            assert_eq!(state, ClientState::Connected);
        } else {
            assert_ne!(state, ClientState::Connected, "the restart rule let it in");
            let rule = DropReason::Packet(PacketError::TokenPredatesStart);
            assert!(second.stats().dropped(rule) > 0);
        }
    }
}

#[test]
fn a_damaged_file_is_replaced_and_the_restart_rule_holds() {
    let file = scratch("damaged");
    std::fs::write(&*file, b"not a history file at all").unwrap();
    // A token issued for this address a second before the server starts.
    let net = Net::new();
    let placeholder = server_at(&net, "127.0.0.1:0", config_with(None, 30));
    let issued = unix_time();
    let before_start = token(3, placeholder.public_address(), 30);
    let address = crash(&net, placeholder);
    wait_until(issued + 1);
    let net = Net::new();
    let mut server = server_at(&net, &address, config_with(Some(&*file), 30));
    assert_ne!(
        attempt(&net, &mut server, &before_start),
        ClientState::Connected
    );
    let rule = DropReason::Packet(PacketError::TokenPredatesStart);
    assert!(server.stats().dropped(rule) > 0);
    let header = std::fs::read(&*file).unwrap();
    assert!(header.starts_with(b"NCTKHIST"), "a new file was written");
}

/// Writes a history file at `file`, begun an hour ago, holding `count`
/// made-up tokens that expire in a minute.
fn file_holding(file: &PathBuf, count: usize) {
    let now = unix_time();
    let store = HistoryStore::open(file, now - 3600).unwrap().store;
    let mut store = store;
    let tokens: Vec<UsedToken> = (0..count)
        .map(|i| {
            let mut mac = [0xa5; 16];
            mac[..8].copy_from_slice(&(i as u64).to_le_bytes());
            UsedToken {
                mac,
                address: SocketAddr::from(([10, 9, (i >> 8) as u8, i as u8], 7000)),
                expire_timestamp: now + 60,
            }
        })
        .collect();
    store.record_all(&tokens).unwrap();
}

#[test]
fn a_file_larger_than_the_usual_history_sizes_it_and_every_token_is_recorded() {
    let file = scratch("larger");
    // A 4-slot server's usual history holds 2048 tokens.
    file_holding(&file, 3000);
    let net = Net::new();
    let mut server = server_at(&net, "127.0.0.1:0", config_with(Some(&*file), 30));
    assert_eq!(server.token_history_in_use(), 3000);
    assert!(server.token_history_capacity() >= 3000 + 2048);
    let used = token(7, server.public_address(), 30);
    assert_eq!(attempt(&net, &mut server, &used), ClientState::Connected);
    assert_eq!(server.token_records_pending(), 0);
    let stats = server.token_history_stats().unwrap();
    assert_eq!((stats.records_durable, stats.records_failed), (1, 0));
    let address = crash(&net, server);

    // The file holds the new token too: a restart refuses it as used.
    let net = Net::new();
    let mut again = server_at(&net, &address, config_with(Some(&*file), 30));
    assert_eq!(again.token_history_in_use(), 3001);
    assert_ne!(attempt(&net, &mut again, &used), ClientState::Connected);
    assert!(again.stats().dropped(DropReason::TokenAlreadyUsed) > 0);
}

#[test]
fn a_file_too_large_to_restore_refuses_to_make_the_server() {
    let file = scratch("too-large");
    file_holding(&file, MAX_RESTORED_TOKENS + 1);
    let net = Net::new();
    let made = Server::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        config_with(Some(&*file), 30),
        net.adopt(),
    );
    match made {
        Err(CreateError::TokenHistoryTooLarge {
            path,
            unexpired,
            limit,
            last_expiry,
        }) => {
            assert_eq!(path, *file);
            assert_eq!(
                (unexpired, limit),
                (MAX_RESTORED_TOKENS + 1, MAX_RESTORED_TOKENS)
            );
            assert!(last_expiry > unix_time());
        }
        other => panic!("made a server over a file too large: {other:?}"),
    }
}

#[test]
fn a_second_server_on_the_same_file_is_refused_until_the_first_is_gone() {
    let file = scratch("locked");
    let net = Net::new();
    let mut first = Server::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        config_with(Some(&*file), 30),
        net.adopt(),
    )
    .unwrap();
    start_nowait(&mut first, 4);
    let second = Server::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        config_with(Some(&*file), 30),
        net.adopt(),
    );
    match second {
        Err(e @ CreateError::TokenHistoryLocked { .. }) => {
            let CreateError::TokenHistoryLocked { path, holder, .. } = &e else {
                unreachable!()
            };
            assert_eq!(path, &*file);
            assert_eq!(*holder, Some(std::process::id()));
            assert!(e.to_string().contains("one server per file"), "{e}");
        }
        other => panic!("a second server opened the file: {other:?}"),
    }
    drop(first);
    let third = Server::bind_with(
        "127.0.0.1:0",
        None::<&str>,
        config_with(Some(&*file), 30),
        net.adopt(),
    );
    assert!(third.is_ok(), "the lock went with the first server");
}

/// Sleeps until the unix clock reads at least `unix`.
fn wait_until(unix: u64) {
    while unix_time() < unix {
        std::thread::sleep(Duration::from_millis(20));
    }
}
