//! `Reconnecting`: a client whose server goes away (here: dropped, its
//! port silent) keeps trying with fresh tokens and bounded backoff, and is
//! back once a new server listens on the same port; every attempt fetched
//! its own token; `stop` ends the attempts.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use netcode_std::proto::client::ClientState;
use netcode_std::{Backoff, Client, ReconnectEvent, Reconnecting, Server};
use test_fixtures::{AdmittedFrom, config, run_for, run_until, start_nowait};

/// What the token source knows: the second the current server admits
/// tokens from, and every token it handed out.
struct Source {
    server: SocketAddr,
    admitted: AdmittedFrom,
    handed_out: Vec<Vec<u8>>,
}

#[test]
fn a_client_comes_back_with_fresh_tokens_after_its_server_restarts() {
    let epoch = Instant::now();
    let mut server = Server::new("127.0.0.1:0", config()).unwrap();
    let admitted = start_nowait(&mut server, 4);
    let address = server.public_address();
    let source = Rc::new(RefCell::new(Source {
        server: address,
        admitted,
        handed_out: Vec::new(),
    }));
    let fetching = Rc::clone(&source);
    let fetch = move || -> Result<[u8; 2048], String> {
        let mut source = fetching.borrow_mut();
        let id = 100 + source.handed_out.len() as u64;
        let token = source.admitted.token_timing_out(id, &[source.server], 1);
        source.handed_out.push(token.to_vec());
        Ok(token)
    };
    let backoff = Backoff {
        first_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(400),
        max_attempts: None,
    };
    let mut client = Reconnecting::new(Client::new("127.0.0.1:0").unwrap(), backoff, fetch);
    run_until("the first connection", epoch, |t| {
        client.update(t);
        server.update(t);
        client.client().state() == ClientState::Connected
    });
    assert_eq!(
        client.next_event(),
        Some(ReconnectEvent::Attempt { attempt: 1 })
    );
    assert_eq!(
        client.next_event(),
        Some(ReconnectEvent::Connected { attempts: 1 })
    );

    // The server vanishes; the client times out and keeps trying (each
    // attempt timing out in its token's one second) while nothing listens.
    drop(server);
    run_for(Duration::from_millis(2500), epoch, |t| client.update(t));
    let mut lost = 0;
    let mut attempts = Vec::new();
    while let Some(event) = client.next_event() {
        match event {
            ReconnectEvent::Lost { retry_in, .. } => {
                assert!(retry_in <= Duration::from_millis(400), "{retry_in:?}");
                lost += 1;
            }
            ReconnectEvent::Attempt { attempt } => attempts.push(attempt),
            other => panic!("unexpected while the server is gone: {other:?}"),
        }
    }
    assert!(
        lost >= 1 && !attempts.is_empty(),
        "lost {lost}, attempts {attempts:?}"
    );
    assert_eq!(attempts, (1..=attempts.len() as u32).collect::<Vec<_>>());

    // A new server on the same port: the client is back, on a fresh token.
    let mut server = Server::new(address, config()).unwrap();
    source.borrow_mut().admitted = start_nowait(&mut server, 4);
    run_until("the connection after the restart", epoch, |t| {
        client.update(t);
        server.update(t);
        client.client().state() == ClientState::Connected
    });
    let back = std::iter::from_fn(|| client.next_event()).last();
    assert!(
        matches!(back, Some(ReconnectEvent::Connected { attempts }) if attempts >= 1),
        "{back:?}"
    );
    client.client_mut().send_packet(b"back").unwrap();
    run_until("the payload after the restart", epoch, |t| {
        client.update(t);
        server.update(t);
        server.receive_packet(0).is_some()
    });
    let handed_out = &source.borrow().handed_out;
    let mut distinct = handed_out.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), handed_out.len(), "a token was used twice");

    // Stopped: the netcode disconnect, and no more attempts.
    client.stop();
    run_until("the server sees the client leave", epoch, |t| {
        client.update(t);
        server.update(t);
        server.num_connected_clients() == 0
    });
    let fetched = source.borrow().handed_out.len();
    run_for(Duration::from_millis(600), epoch, |t| client.update(t));
    assert_eq!(source.borrow().handed_out.len(), fetched);
    assert!(client.stopped());
}
