//! The token history file (`ServerConfig::token_history_file`) wired into
//! the server: after a crash, a restarted server refuses a token it had
//! used as used (not by the restart rule), accepts at once a token issued
//! before the restart (but after the file began), and starts a
//! new file, behind the restart rule, when the old one is damaged.

mod common;
mod memory;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use common::{PROTOCOL_ID, config, key};
use memory::*;
use netcode_std::proto::PacketError;
use netcode_std::proto::stats::DropReason;
use netcode_std::{BindMode, ClientState, ConnectTokenBuilder, Server, ServerConfig, unix_time};

/// A file path of this test's own under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("netcode-{name}-{}.history", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
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
/// predecessor's port).
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
    run(&mut clock, 40, server, &mut [&mut client], all_connected);
    client.state()
}

#[test]
fn a_restarted_server_refuses_a_token_it_used_as_used() {
    for with_file in [true, false] {
        let file = scratch(&format!("used-{with_file}"));
        let file = with_file.then_some(&file);
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
        let file = with_file.then_some(&file);
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
    std::fs::write(&file, b"not a history file at all").unwrap();
    // A token issued for this address a second before the server starts.
    let net = Net::new();
    let placeholder = server_at(&net, "127.0.0.1:0", config_with(None, 30));
    let issued = unix_time();
    let before_start = token(3, placeholder.public_address(), 30);
    let address = crash(&net, placeholder);
    wait_until(issued + 1);
    let net = Net::new();
    let mut server = server_at(&net, &address, config_with(Some(&file), 30));
    assert_ne!(
        attempt(&net, &mut server, &before_start),
        ClientState::Connected
    );
    let rule = DropReason::Packet(PacketError::TokenPredatesStart);
    assert!(server.stats().dropped(rule) > 0);
    let header = std::fs::read(&file).unwrap();
    assert!(header.starts_with(b"NCTKHIST"), "a new file was written");
}

/// Sleeps until the unix clock reads at least `unix`.
fn wait_until(unix: u64) {
    while unix_time() < unix {
        std::thread::sleep(Duration::from_millis(20));
    }
}
