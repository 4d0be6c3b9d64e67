//! Servers and clients on real tokio runtimes over loopback UDP: many
//! clients on spawned tasks of a multi-threaded runtime against a spawned
//! server, IPv6, and a dual-stack server reached over both families.

use crate::common::*;
use netcode_tokio::{Client, ClientState, Incoming, Server, ServerEvent};
use tokio::sync::oneshot;

/// Clients in the many-clients test.
const CLIENTS: u64 = 32;
/// Payloads each of them sends, each echo awaited before the next.
const ROUNDS: u64 = 20;

/// What the server's task saw before it was told to stop.
#[derive(Debug, Default)]
struct Seen {
    connected: u64,
    payloads: u64,
}

/// Echoes on a task of its own, counting connects and payloads, until
/// `stop` fires; hands the server back.
async fn echo_until(mut server: Server, mut stop: oneshot::Receiver<()>) -> (Server, Seen) {
    let mut seen = Seen::default();
    loop {
        tokio::select! {
            incoming = server.next() => match incoming {
                Incoming::Event(ServerEvent::ClientConnected { .. }) => seen.connected += 1,
                Incoming::Event(_) => {}
                Incoming::Payload { client_index, packet } => {
                    seen.payloads += 1;
                    server.send_packet(client_index, packet.data()).expect("echo");
                    server.free_packet(packet);
                }
            },
            _ = &mut stop => return (server, seen),
        }
    }
}

/// Connects a client from `bind` to `server` as `client_id` (its token
/// issued as of `admitted`), then sends [`ROUNDS`] payloads, checking each
/// echo byte for byte.
async fn talk(
    bind: &str,
    (server, admitted): (std::net::SocketAddr, AdmittedFrom),
    client_id: u64,
) -> Client {
    let mut client = Client::new(bind).await.expect("bind a client");
    client
        .connect(&token(admitted, client_id, &[server]))
        .expect("connect");
    within("the client connects", client.connected())
        .await
        .expect("connected");
    for n in 0..ROUNDS {
        let sent = payload(client_id, n);
        client.send_packet(&sent).expect("send");
        let echo = within("an echo", client.recv())
            .await
            .expect("still connected");
        assert_eq!(echo.data(), &sent[..], "client {client_id}, payload {n}");
        client.free_packet(echo);
    }
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_clients_exchange_payloads_with_a_spawned_server_over_ipv4() {
    let (server, admitted) = server("127.0.0.1:0", CLIENTS as usize).await;
    let address = server.public_address();
    let (stop, stopped) = oneshot::channel();
    let echo = tokio::spawn(echo_until(server, stopped));
    let clients: Vec<_> = (1..=CLIENTS)
        .map(|id| tokio::spawn(async move { talk("127.0.0.1:0", (address, admitted), id).await }))
        .collect();
    let mut done = Vec::new();
    for client in clients {
        done.push(client.await.expect("a client task"));
    }
    assert!(done.iter().all(|c| c.state() == ClientState::Connected));
    stop.send(()).expect("the server task is running");
    let (server, seen) = echo.await.expect("the server task");
    assert_eq!(seen.connected, CLIENTS);
    assert_eq!(seen.payloads, CLIENTS * ROUNDS);
    assert_eq!(server.num_connected_clients(), CLIENTS as usize);
    let stats = server.transport_stats();
    assert_eq!(stats.send_errors, 0, "{stats:?}");
}

#[tokio::test]
async fn a_client_talks_to_a_server_over_ipv6() {
    if !ipv6_available("a_client_talks_to_a_server_over_ipv6") {
        return;
    }
    let (server, admitted) = server("[::1]:0", 4).await;
    let address = server.public_address();
    assert!(address.is_ipv6());
    let echo = tokio::spawn(echo_forever(server));
    let client = talk("[::1]:0", (address, admitted), 7).await;
    assert_eq!(client.server_address(), Some(address));
    echo.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dual_stack_server_is_reached_over_both_families() {
    if !ipv6_available("a_dual_stack_server_is_reached_over_both_families") {
        return;
    }
    let mut server = Server::new_dual("127.0.0.1:0", "[::1]:0", config())
        .await
        .expect("bind both sockets");
    let admitted = start_nowait(&mut server, 4);
    let v4 = server.public_address();
    let v6 = server.secondary_address().expect("an IPv6 address");
    let (stop, stopped) = oneshot::channel();
    let echo = tokio::spawn(echo_until(server, stopped));
    let (a, b) = tokio::join!(
        talk("127.0.0.1:0", (v4, admitted), 1),
        talk("[::1]:0", (v6, admitted), 2)
    );
    assert_eq!(a.server_address(), Some(v4));
    assert_eq!(b.server_address(), Some(v6));
    stop.send(()).expect("the server task is running");
    let (_, seen) = echo.await.expect("the server task");
    assert_eq!((seen.connected, seen.payloads), (2, 2 * ROUNDS));
}
