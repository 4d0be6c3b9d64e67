//! renet over the adapter over real UDP on the loopback interface: a
//! connection, reliable-ordered and unreliable traffic both ways with
//! messages of every size class (sliced ones included), what the server
//! knows of its client, and disconnects each way.

use std::time::{Duration, Instant};

use crate::common::{PROTOCOL_ID, Pair, Traffic, exchange, key, start_nowait, token, user_data};
use netcode_renet::netcode_std::Server;
use netcode_renet::{
    ClientState, NetcodeClientTransport, NetcodeServerTransport, NetcodeTransportError,
    ServerConfig,
};
use renet::{ConnectionConfig, RenetClient, RenetServer, ServerEvent};

/// Every loop gives up after about this many ticks of about 1 ms.
const MAX_TICKS: usize = 20_000;

/// A paced real clock: sleeps a millisecond, returns the time since the
/// last call.
fn real_clock() -> impl FnMut() -> Duration {
    let mut last = Instant::now();
    move || {
        std::thread::sleep(Duration::from_millis(1));
        let now = Instant::now();
        let dt = now - last;
        last = now;
        dt
    }
}

/// A renet server and client on the adapter over loopback UDP: the
/// netcode server started without waiting for the wall clock, the
/// client's token issued as of the second it returned.
fn pair(client_id: u64) -> Pair<std::net::UdpSocket> {
    let config = ServerConfig::new(PROTOCOL_ID, key());
    let mut host = Server::new("127.0.0.1:0", config).unwrap();
    let admitted = start_nowait(&mut host, 8);
    let server_transport = NetcodeServerTransport::from_server(host);
    let address = server_transport.addresses()[0];
    let client_transport =
        NetcodeClientTransport::new("127.0.0.1:0", &token(admitted, client_id, address)).unwrap();
    Pair {
        server: RenetServer::new(ConnectionConfig::default()),
        server_transport,
        client: RenetClient::new(ConnectionConfig::default()),
        client_transport,
        client_id,
    }
}

/// Ticks the client alone until its transport fails (or [`MAX_TICKS`]
/// pass); the last outcome.
fn client_until_error<S: netcode_renet::netcode_std::transport::Socket>(
    pair: &mut Pair<S>,
    clock: &mut impl FnMut() -> Duration,
) -> Result<(), NetcodeTransportError> {
    for _ in 0..MAX_TICKS {
        let dt = clock();
        pair.client.update(dt);
        pair.client_transport.update(dt, &mut pair.client)?;
    }
    Ok(())
}

#[test]
fn reliable_and_unreliable_messages_of_every_size_cross_loopback_udp() {
    let mut pair = pair(0x1234);
    let mut clock = real_clock();
    pair.connect(MAX_TICKS, &mut clock);
    let traffic = Traffic {
        count: 120,
        burst: 6,
        reordering: false,
    };
    let (up, down, unreliable_sent) = exchange(&mut pair, &traffic, MAX_TICKS, &mut clock);
    // Loopback loses nothing at this rate: every unreliable message too.
    let all: Vec<u32> = (0..unreliable_sent).collect();
    assert_eq!(up.unreliable, all, "client to server, unreliable");
    assert_eq!(down.unreliable, all, "server to client, unreliable");
    for stats in [pair.client_transport.stats(), pair.server_transport.stats()] {
        assert!(
            stats.packets_split > 0 && stats.packets_reassembled > 0,
            "{stats:?}"
        );
        assert_eq!(stats.payloads_malformed, 0, "{stats:?}");
        assert_eq!(stats.packets_not_sent, 0, "{stats:?}");
    }
    // The host refused nothing: no payload was over 1200 bytes.
    assert_eq!(
        pair.client_transport.host().transport_stats().send_errors,
        0
    );
}

#[test]
fn the_server_maps_client_ids_to_slots_and_knows_their_token() {
    let mut pair = pair(77);
    let mut clock = real_clock();
    pair.connect(MAX_TICKS, &mut clock);
    let server = &pair.server_transport;
    let slot = server.client_slot(77).expect("a slot");
    assert_eq!(slot, pair.client_transport.client_index());
    assert_eq!(server.slot_client_id(slot), Some(77));
    assert_eq!(server.client_slot(78), None);
    assert_eq!(server.user_data(77), Some(user_data(77)));
    assert_eq!(server.client_addr(77), Some(pair.client_transport.addr()));
    assert_eq!((server.connected_clients(), server.max_clients()), (1, 8));
    assert!(server.time_since_last_received_packet(77).is_some());
    assert_eq!(server.time_since_last_received_packet(78), None);
    assert_eq!(
        pair.server.get_event(),
        Some(ServerEvent::ClientConnected { client_id: 77 })
    );
}

#[test]
fn a_renet_disconnect_on_the_server_reaches_the_client() {
    let mut pair = pair(5);
    let mut clock = real_clock();
    pair.connect(MAX_TICKS, &mut clock);
    pair.server.disconnect(5);
    let dt = clock();
    pair.server.update(dt);
    pair.server_transport.update(dt, &mut pair.server).unwrap();
    assert_eq!(pair.server_transport.client_slot(5), None);
    assert_eq!(pair.server_transport.connected_clients(), 0);
    let outcome = client_until_error(&mut pair, &mut clock);
    assert_eq!(
        outcome,
        Err(NetcodeTransportError::Disconnected(
            ClientState::Disconnected
        ))
    );
    assert!(pair.client.is_disconnected());
    assert_eq!(
        pair.client_transport.disconnect_reason(),
        Some(ClientState::Disconnected)
    );
}

#[test]
fn a_renet_disconnect_on_the_client_reaches_the_server() {
    let mut pair = pair(6);
    let mut clock = real_clock();
    pair.connect(MAX_TICKS, &mut clock);
    while pair.server.get_event().is_some() {}
    pair.client.disconnect();
    let dt = clock();
    let outcome = pair.client_transport.update(dt, &mut pair.client);
    assert!(
        matches!(outcome, Err(NetcodeTransportError::Renet(_))),
        "{outcome:?}"
    );
    assert_eq!(pair.client_transport.state(), ClientState::Disconnected);
    for _ in 0..MAX_TICKS {
        let dt = clock();
        pair.server.update(dt);
        pair.server_transport.update(dt, &mut pair.server).unwrap();
        if pair.server_transport.connected_clients() == 0 {
            break;
        }
    }
    assert_eq!(pair.server_transport.connected_clients(), 0);
    assert!(matches!(
        pair.server.get_event(),
        Some(ServerEvent::ClientDisconnected { client_id: 6, .. })
    ));
}

#[test]
fn disconnect_all_empties_both_sides() {
    let mut pair = pair(9);
    let mut clock = real_clock();
    pair.connect(MAX_TICKS, &mut clock);
    pair.server_transport.disconnect_all(&mut pair.server);
    assert_eq!(pair.server.connected_clients(), 0);
    let outcome = client_until_error(&mut pair, &mut clock);
    assert_eq!(
        outcome,
        Err(NetcodeTransportError::Disconnected(
            ClientState::Disconnected
        ))
    );
}
