//! `Reconnecting` under tokio: the server's task is aborted and the server
//! dropped (its port silent); the client's `recv` reconnects, fetching a
//! fresh token per attempt, and returns the greeting of the new server
//! that listens on the same port a moment later.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use netcode_tokio::{Backoff, Client, Incoming, ReconnectEvent, Reconnecting, Server, ServerEvent};
use test_fixtures::AdmittedFrom;

use crate::common::*;

/// The token source's state: the second the current server admits tokens
/// from, and every token handed out.
type Source = Arc<Mutex<(AdmittedFrom, Vec<[u8; 2048]>)>>;

/// Greets each client that connects, and echoes every payload.
async fn greet_forever(mut server: Server) {
    loop {
        match server.next().await {
            Incoming::Event(ServerEvent::ClientConnected { client_index, .. }) => {
                let _ = server.send_packet(client_index, b"welcome back");
            }
            Incoming::Event(_) => {}
            Incoming::Payload {
                client_index,
                packet,
            } => {
                let _ = server.send_packet(client_index, packet.data());
                server.free_packet(packet);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recv_reconnects_with_a_fresh_token_after_the_server_restarts() {
    let (server, admitted) = server("127.0.0.1:0", 4).await;
    let address = server.public_address();
    let first = tokio::spawn(echo_forever(server));
    let source: Source = Arc::new(Mutex::new((admitted, Vec::new())));
    let fetching = Arc::clone(&source);
    let fetch = move || {
        let fetching = Arc::clone(&fetching);
        async move {
            let mut source = fetching.lock().unwrap();
            let id = 200 + source.1.len() as u64;
            let fresh = source.0.token_timing_out(id, &[address], 1);
            source.1.push(fresh);
            Ok::<_, String>(fresh)
        }
    };
    let backoff = Backoff {
        first_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(400),
        max_attempts: None,
    };
    let mut client = Reconnecting::new(Client::new("127.0.0.1:0").await.unwrap(), backoff, fetch);
    within("the first connection", client.connect())
        .await
        .unwrap();
    client.client_mut().send_packet(b"before").unwrap();
    let echoed = within("the first echo", client.recv()).await.unwrap();
    assert_eq!(echoed.data(), b"before");

    // The server goes; a new one comes on the same port 1.5 s later.
    first.abort();
    let _ = first.await;
    let restart_source = Arc::clone(&source);
    let second = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let mut server = Server::new(address, test_fixtures::config()).await.unwrap();
        restart_source.lock().unwrap().0 = start_nowait(&mut server, 4);
        greet_forever(server).await;
    });
    let greeting = within("recv across the restart", client.recv())
        .await
        .expect("back");
    assert_eq!(greeting.data(), b"welcome back");

    let events: Vec<ReconnectEvent> = std::iter::from_fn(|| client.next_event()).collect();
    assert_eq!(events[0], ReconnectEvent::Attempt { attempt: 1 });
    assert_eq!(events[1], ReconnectEvent::Connected { attempts: 1 });
    assert!(
        matches!(events[2], ReconnectEvent::Lost { retry_in, .. } if retry_in <= Duration::from_millis(100)),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(ReconnectEvent::Connected { attempts }) if *attempts >= 1),
        "{events:?}"
    );
    let handed_out = source.lock().unwrap().1.clone();
    let mut distinct = handed_out.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), handed_out.len(), "a token was used twice");
    assert!(handed_out.len() >= 2);
    client.stop();
    second.abort();
}
