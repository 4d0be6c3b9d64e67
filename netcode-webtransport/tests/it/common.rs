//! What the WebTransport tests share: one netcode server on loopback with
//! a UDP socket, a WebTransport endpoint and a WebSocket endpoint beside it
//! attached, run in a task that
//! echoes every payload, reports every event and answers questions; the
//! workspace's test key and tokens issued for it; a bound on every wait.
//!
//! The server starts without waiting out netcode-std's restart rule (its
//! `start` sleeps until the wall clock leaves the start second, up to a
//! second): [`Rig::token`] issues tokens as of the first second the rule
//! admits, as a backend that knows the server's start would.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use netcode_tokio::proto::stats::Stats;
use netcode_tokio::{ConnectTokenBuilder, DisconnectReason, Incoming, Server, ServerEvent};
use netcode_webtransport::{WebSocket, WebSocketConfig, WebTransport, WebTransportConfig};
use tokio::sync::{mpsc, oneshot};

pub(crate) use test_fixtures::{DEADLINE, PROTOCOL_ID, config, key, pattern};

/// Awaits `future`, panicking with `what` after [`DEADLINE`].
pub(crate) async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, future).await {
        Ok(value) => value,
        Err(_) => panic!("timed out after {DEADLINE:?}: {what}"),
    }
}

/// What the server task answers.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    /// The server's counters.
    pub(crate) stats: Stats,
    /// Clients connected.
    pub(crate) connected: usize,
}

/// A running server: its UDP address, its WebTransport endpoint, the first
/// unix second of issue its restart rule admits, its events, and a line to
/// ask it for a [`Snapshot`].
pub(crate) struct Rig {
    pub(crate) udp: SocketAddr,
    pub(crate) web: WebTransport,
    pub(crate) socket: WebSocket,
    pub(crate) admitted_from: u64,
    events: mpsc::UnboundedReceiver<ServerEvent>,
    ask: mpsc::UnboundedSender<oneshot::Sender<Snapshot>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Rig {
    /// A server with `slots` slots, UDP on 127.0.0.1, and WebTransport as
    /// `tweak` leaves a self-signed config for 127.0.0.1, started at once
    /// (see [`Rig::token`]).
    pub(crate) async fn start(slots: usize, tweak: impl FnOnce(&mut WebTransportConfig)) -> Self {
        Self::start_both(slots, tweak, |_| {}).await
    }

    /// [`start`](Self::start), with the WebSocket endpoint as `tweak_socket`
    /// leaves a plain `ws://` config on 127.0.0.1.
    pub(crate) async fn start_both(
        slots: usize,
        tweak: impl FnOnce(&mut WebTransportConfig),
        tweak_socket: impl FnOnce(&mut WebSocketConfig),
    ) -> Self {
        let mut server = Server::new("127.0.0.1:0", config())
            .await
            .expect("bind UDP");
        let mut web_config =
            WebTransportConfig::self_signed("127.0.0.1:0".parse().unwrap(), &["127.0.0.1"]);
        tweak(&mut web_config);
        let web = WebTransport::bind(web_config)
            .await
            .expect("bind WebTransport");
        let mut socket_config = WebSocketConfig::new("127.0.0.1:0".parse().unwrap());
        tweak_socket(&mut socket_config);
        let socket = WebSocket::bind_beside(socket_config, &web)
            .await
            .expect("bind WebSocket");
        web.attach(&mut server);
        let admitted_from = server.get_mut().start_nowait(slots).expect("start");
        let udp = server.public_address();
        let (event_tx, events) = mpsc::unbounded_channel();
        let (ask, mut questions) = mpsc::unbounded_channel::<oneshot::Sender<Snapshot>>();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    incoming = server.next() => match incoming {
                        Incoming::Payload { client_index, packet } => {
                            let _ = server.send_packet(client_index, packet.data());
                            server.free_packet(packet);
                        }
                        Incoming::Event(event) => {
                            let _ = event_tx.send(event);
                        }
                    },
                    Some(reply) = questions.recv() => {
                        let _ = reply.send(Snapshot {
                            stats: server.stats(),
                            connected: server.num_connected_clients(),
                        });
                    }
                }
            }
        });
        Self {
            udp,
            web,
            socket,
            admitted_from,
            events,
            ask,
            task,
        }
    }

    /// A token of the test key for `client_id`, listing the server's UDP
    /// address, timing out after 2 s of silence, issued as of
    /// [`admitted_from`](Self::admitted_from) (so the restart rule admits
    /// it without waiting for the wall clock).
    pub(crate) fn token(&self, client_id: u64) -> [u8; 2048] {
        ConnectTokenBuilder::new(PROTOCOL_ID, &key(), client_id)
            .server_addresses([self.udp])
            .user_data(&test_fixtures::user_data(client_id))
            .timeout_seconds(2)
            .issued_at(self.admitted_from)
            .generate()
            .unwrap_or_else(|e| panic!("token for client {client_id}: {e}"))
    }

    /// The URL of the WebTransport endpoint.
    pub(crate) fn url(&self) -> String {
        self.web.url("127.0.0.1")
    }

    /// The URL of the WebSocket endpoint.
    pub(crate) fn socket_url(&self) -> String {
        self.socket.url("127.0.0.1")
    }

    /// The server's counters now.
    pub(crate) async fn snapshot(&self) -> Snapshot {
        let (reply, answer) = oneshot::channel();
        self.ask.send(reply).expect("the server task runs");
        within("the server answers", answer)
            .await
            .expect("an answer")
    }

    /// The next event.
    pub(crate) async fn event(&mut self) -> ServerEvent {
        within("a server event", self.events.recv())
            .await
            .expect("the server task runs")
    }

    /// Waits until `done` holds of the endpoint's stats and the server's
    /// snapshot, polling every 20 ms.
    pub(crate) async fn until(
        &self,
        what: &str,
        mut done: impl FnMut(&netcode_webtransport::WebTransportStats, &Snapshot) -> bool,
    ) {
        let started = tokio::time::Instant::now();
        loop {
            let snapshot = self.snapshot().await;
            let stats = self.web.stats();
            if done(&stats, &snapshot) {
                return;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?}: {what}\n{stats:?}\n{snapshot:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Rig {
    /// Waits until the WebSocket endpoint holds no session, for `what`.
    pub(crate) async fn until_no_socket_open(&self, what: &str) {
        within(what, async {
            while self.socket.stats().sessions_open > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// Whether `event` is the connection of a client whose address is
/// virtual (a WebTransport session) or not.
pub(crate) fn connected_over(event: &ServerEvent) -> Option<(u64, bool)> {
    match event {
        ServerEvent::ClientConnected {
            client_id, address, ..
        } => Some((
            *client_id,
            address.is_some_and(|a| netcode_tokio::netcode_std::transport::is_virtual(&a)),
        )),
        _ => None,
    }
}

/// Whether `event` is client `id` leaving by its own disconnect packets.
pub(crate) fn left_by_disconnecting(event: &ServerEvent, id: u64) -> bool {
    matches!(event, ServerEvent::ClientDisconnected { client_id, reason: DisconnectReason::ClientDisconnect, .. } if *client_id == id)
}

/// A UDP client of a [`Rig`]'s server (client id 1) that sends a payload
/// and waits for its echo, over and over, until stopped: every payload
/// must come back intact within 2 s, whatever else the server is put
/// through meanwhile.
pub(crate) struct UdpEchoer {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<u64>,
}

impl UdpEchoer {
    /// Connects and starts echoing.
    pub(crate) async fn start(rig: &Rig) -> Self {
        let mut udp = netcode_tokio::Client::new("127.0.0.1:0").await.unwrap();
        udp.connect(&rig.token(1)).unwrap();
        within("the UDP client connects", udp.connected())
            .await
            .unwrap();
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut echoed = 0u64;
            loop {
                let sent = pattern(1 + (echoed as usize * 31) % 1200, echoed);
                udp.send_packet(&sent).unwrap();
                let echo = tokio::time::timeout(Duration::from_secs(2), udp.recv())
                    .await
                    .expect("every UDP payload is echoed within 2 s")
                    .expect("the UDP client stays connected");
                assert_eq!(echo.data(), &sent[..]);
                echoed += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
                if stopped.try_recv().is_ok() {
                    return echoed;
                }
            }
        });
        Self { stop, task }
    }

    /// Stops, checking that the client echoed throughout.
    pub(crate) async fn stop(self) {
        self.stop.send(()).unwrap();
        let echoed = within("the UDP client stops", self.task).await.unwrap();
        assert!(
            echoed > 10,
            "the UDP client exchanged {echoed} payloads meanwhile"
        );
    }
}
