//! Connection scenarios between this crate's [`Driver`] and a real
//! netcode-proto server, with the session replaced by two in-memory queues:
//! the handshake, payloads both ways at the session's limits, a clean
//! disconnect, and a session that closes under a connected client.
//!
//! Shared by `native` (run natively) and `web` (run in headless Chromium,
//! where it exercises the wasm build's crypto end to end). Each function panics with a message when the scenario fails.

use core::net::SocketAddr;
use core::time::Duration;

use netcode_browser::{Driver, Inbox, SendError};
use netcode_proto::client::{ClientEvent, ClientState};
use netcode_proto::io::Output;
use netcode_proto::seeded::SeededRng;
use netcode_proto::server::{DisconnectReason, HeapStorage, Server, ServerConfig, ServerEvent};
use netcode_proto::token::ConnectTokenParams;
use netcode_proto::{Instant, Key, generate_connect_token};

const PROTOCOL_ID: u64 = 0x6e65_7463_6f64_6521;
const PRIVATE_KEY: [u8; 32] = [0x42; 32];
/// The server's UDP address, as the token lists it.
const SERVER: &str = "127.0.0.1:40000";
/// The address the server sees the session's datagrams come from.
const SESSION: &str = "10.1.2.3:50000";
/// Chromium 156's `maxDatagramSize`.
const CHROMIUM_DATAGRAM: usize = 1211;
/// Unix time of the scenario.
const UNIX: u64 = 1_800_000_000;
/// One frame of the loop.
const FRAME: Duration = Duration::from_millis(10);

fn address(text: &str) -> SocketAddr {
    text.parse()
        .unwrap_or_else(|_| panic!("not an address: {text}"))
}

/// The server's output: datagrams for the session go into the client's
/// inbox, events into a list.
struct ServerOut<'a> {
    session: SocketAddr,
    inbox: &'a mut Inbox,
    events: &'a mut Vec<ServerEvent>,
}

impl Output<ServerEvent> for ServerOut<'_> {
    fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        assert_eq!(to, self.session, "the server sent to another address");
        self.inbox.push(datagram.to_vec());
    }

    fn event(&mut self, event: ServerEvent) {
        self.events.push(event);
    }
}

/// A netcode server and one driver joined by in-memory queues.
struct Link {
    now: Instant,
    server: Server<HeapStorage>,
    server_events: Vec<ServerEvent>,
    server_received: Vec<Vec<u8>>,
    driver: Driver,
    inbox: Inbox,
    /// What the driver wrote and the server has not read yet.
    to_server: Vec<Vec<u8>>,
    /// The size of every datagram the driver wrote.
    written_sizes: Vec<usize>,
    rng: SeededRng,
}

impl Link {
    fn new(max_datagram_size: usize) -> Self {
        let mut rng = SeededRng::new(7);
        let now = Instant::from_secs(100);
        let config = ServerConfig::new(PROTOCOL_ID, Key::from_bytes(PRIVATE_KEY), address(SERVER));
        let mut server = Server::new(config, HeapStorage::new(4))
            .unwrap_or_else(|e| panic!("server storage: {e}"));
        let mut inbox = Inbox::default();
        let mut server_events = Vec::new();
        let mut out = ServerOut {
            session: address(SESSION),
            inbox: &mut inbox,
            events: &mut server_events,
        };
        // Started a second before the token is minted (the restart rule).
        server
            .start(now, UNIX - 1, 4, &mut rng, &mut out)
            .unwrap_or_else(|e| panic!("server start: {e}"));
        Self {
            now,
            server,
            server_events,
            server_received: Vec::new(),
            driver: Driver::new(max_datagram_size),
            inbox,
            to_server: Vec::new(),
            written_sizes: Vec::new(),
            rng,
        }
    }

    fn token(&mut self, client_id: u64) -> [u8; 2048] {
        let key = Key::from_bytes(PRIVATE_KEY);
        let user_data = [7u8; 256];
        let params = ConnectTokenParams {
            protocol_id: PROTOCOL_ID,
            private_key: &key,
            client_id,
            public_addresses: &[address(SERVER)],
            internal_addresses: None,
            create_timestamp: UNIX,
            expire_seconds: 30,
            timeout_seconds: 5,
            user_data: &user_data,
        };
        generate_connect_token(&params, &mut self.rng)
            .and_then(|t| t.write())
            .unwrap_or_else(|e| panic!("token: {e}"))
    }

    fn unix(&self) -> u64 {
        UNIX + self.now.since_epoch().as_secs() - 100
    }

    /// Hands the server what the driver wrote.
    fn deliver_to_server(&mut self) {
        let (now, session) = (self.now, address(SESSION));
        for mut datagram in std::mem::take(&mut self.to_server) {
            self.written_sizes.push(datagram.len());
            let mut out = ServerOut {
                session,
                inbox: &mut self.inbox,
                events: &mut self.server_events,
            };
            if let Some((_, payload)) = self.server.handle(now, session, &mut datagram, &mut out) {
                self.server_received.push(payload.data.to_vec());
            }
        }
    }

    /// One frame: the driver's update, then the server's turn.
    fn frame(&mut self) {
        self.now = self.now.saturating_add(FRAME);
        self.driver
            .update(self.now, &mut self.inbox, &mut self.to_server);
        self.deliver_to_server();
        let (now, unix) = (self.now, self.unix());
        let mut out = ServerOut {
            session: address(SESSION),
            inbox: &mut self.inbox,
            events: &mut self.server_events,
        };
        self.server.update(now, unix, &mut out);
    }

    fn run_until(&mut self, frames: usize, mut done: impl FnMut(&Self) -> bool) -> bool {
        for _ in 0..frames {
            if done(self) {
                return true;
            }
            self.frame();
        }
        done(self)
    }

    fn connect(&mut self) {
        let token = self.token(1);
        self.driver
            .connect(self.now, &token, &mut self.to_server)
            .unwrap_or_else(|e| panic!("connect: {e}"));
        let connected = self.run_until(200, |l| l.driver.state() == ClientState::Connected);
        assert!(
            connected,
            "not connected after 2 s: {:?}",
            self.driver.state()
        );
        assert!(
            self.server_events
                .iter()
                .any(|e| matches!(e, ServerEvent::ClientConnected { client_id: 1, .. })),
            "the server reported no connection: {:?}",
            self.server_events
        );
    }

    fn client_states(&mut self) -> Vec<ClientState> {
        std::iter::from_fn(|| self.driver.next_event())
            .map(|ClientEvent::StateChanged { to, .. }| to)
            .collect()
    }
}

fn payload(len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + salt) as u8).collect()
}

/// The handshake, payloads both ways (the client's up to its session's
/// limit, the server's up to netcode's 1200), the limit enforced, and a
/// clean disconnect the server sees as the client's.
pub(crate) fn handshake_payloads_and_disconnect() {
    let mut link = Link::new(CHROMIUM_DATAGRAM);
    link.connect();
    assert_eq!(link.driver.client_index(), Some(0));
    assert_eq!(
        link.client_states(),
        [
            ClientState::SendingConnectionRequest,
            ClientState::SendingConnectionResponse,
            ClientState::Connected
        ]
    );

    // Client to server: every size up to the limit that fits a datagram.
    let limit = link.driver.payload_limit();
    assert_eq!(limit, 1186);
    for (i, len) in [1, 100, limit].into_iter().enumerate() {
        link.driver
            .send(link.now, &payload(len, i), &mut link.to_server)
            .unwrap_or_else(|e| panic!("send {len}: {e}"));
    }
    assert_eq!(
        link.driver
            .send(link.now, &payload(limit + 1, 9), &mut link.to_server),
        Err(SendError::TooLarge {
            len: limit + 1,
            limit
        })
    );
    link.frame();
    assert_eq!(
        link.server_received,
        [payload(1, 0), payload(100, 1), payload(limit, 2)]
    );
    let largest = link.written_sizes.iter().copied().max().unwrap_or(0);
    // Prefix, a short sequence and the tag; 8 sequence bytes at most.
    assert!(
        (limit + 18..=CHROMIUM_DATAGRAM).contains(&largest),
        "the largest payload's datagram has {largest} bytes"
    );

    // Server to client: full 1200-byte payloads too.
    for (i, len) in [1, 1200].into_iter().enumerate() {
        let (now, mut inbox, mut events) = (
            link.now,
            std::mem::take(&mut link.inbox),
            std::mem::take(&mut link.server_events),
        );
        let mut out = ServerOut {
            session: address(SESSION),
            inbox: &mut inbox,
            events: &mut events,
        };
        if let Err(e) = link
            .server
            .send_payload(now, 0, &payload(len, 10 + i), &mut out)
        {
            panic!("server send: {e}");
        }
        link.inbox = inbox;
        link.server_events = events;
    }
    link.frame();
    assert_eq!(link.driver.receive(), Some(payload(1, 10)));
    assert_eq!(link.driver.receive(), Some(payload(1200, 11)));
    assert_eq!(link.driver.receive(), None);

    // Keep-alives hold the connection through 3 quiet seconds.
    link.run_until(300, |_| false);
    assert_eq!(link.driver.state(), ClientState::Connected);
    let stats = link.driver.connection_stats(link.now);
    assert!(stats.packets_received > 20, "{stats:?}");

    // A clean disconnect: the core's 10 packets, the server sees the
    // client leave (not a timeout).
    let before = link.to_server.len();
    link.driver.disconnect(link.now, &mut link.to_server);
    assert_eq!(link.to_server.len() - before, 10);
    assert_eq!(link.driver.state(), ClientState::Disconnected);
    assert!(link.driver.closed().is_some());
    link.deliver_to_server();
    assert!(
        link.server_events.iter().any(|e| matches!(
            e,
            ServerEvent::ClientDisconnected {
                reason: DisconnectReason::ClientDisconnect,
                ..
            }
        )),
        "the server did not see the client's disconnect: {:?}",
        link.server_events
    );
    assert_eq!(
        link.driver.send(link.now, &[1], &mut link.to_server),
        Err(SendError::SessionClosed)
    );
    assert!(
        link.written_sizes.iter().all(|&n| n <= CHROMIUM_DATAGRAM),
        "a datagram was larger than the session carries"
    );
}

/// The session closes under a connected client: it is disconnected at
/// once, visibly, and sends fail with `SessionClosed`; nothing panics.
pub(crate) fn a_closed_session_disconnects_the_client() {
    let mut link = Link::new(CHROMIUM_DATAGRAM);
    link.connect();
    link.client_states();
    link.inbox.close("the server closed the session");
    link.frame();
    assert_eq!(link.driver.state(), ClientState::Disconnected);
    assert_eq!(link.driver.closed(), Some("the server closed the session"));
    assert_eq!(link.client_states(), [ClientState::Disconnected]);
    assert_eq!(
        link.driver.send(link.now, &[1], &mut link.to_server),
        Err(SendError::SessionClosed)
    );
    // Later updates are quiet.
    link.to_server.clear();
    link.run_until(50, |_| false);
    assert!(link.to_server.is_empty());
}

/// A server that sends its netcode disconnect and then closes the session:
/// the disconnect applies first, as from any server.
pub(crate) fn a_server_disconnect_then_close_applies_in_order() {
    let mut link = Link::new(CHROMIUM_DATAGRAM);
    link.connect();
    link.client_states();
    let (mut inbox, mut events) = (
        std::mem::take(&mut link.inbox),
        std::mem::take(&mut link.server_events),
    );
    let mut out = ServerOut {
        session: address(SESSION),
        inbox: &mut inbox,
        events: &mut events,
    };
    link.server.disconnect_client(0, &mut out);
    inbox.close("closed after the disconnect");
    link.inbox = inbox;
    link.server_events = events;
    link.frame();
    assert_eq!(link.driver.state(), ClientState::Disconnected);
    assert_eq!(link.client_states(), [ClientState::Disconnected]);
}
