//! A netcode server whose life is tied to its Agones GameServer: started
//! on the address Agones reports and announced before `Ready`
//! ([`DedicatedServer::start`]), updated by the game loop with the health
//! pings, player tracking and match rules riding along
//! ([`DedicatedServer::update`]), and ended with its clients disconnected
//! and `Shutdown` called ([`DedicatedServer::finish`]).

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netcode_std::{Server, ServerConfig, ServerEvent};
use netcode_webtransport::WebTransport;

use crate::address::wait_for_public_address;
use crate::announce::{Announcement, CERT_HASH_ANNOTATION};
use crate::browsers::{
    BrowserOptions, Browsers, WEBTRANSPORT_LABEL, WEBTRANSPORT_URL_ANNOTATION, public_port,
    url as browser_url,
};
use crate::error::StartError;
use crate::link::{Link, LinkOptions, ShutdownError};
use crate::policy::{MatchEnd, MatchRules, MatchTracker};
use crate::socket::bind_server;
use crate::{TARGET, sidecar};

/// Everything [`DedicatedServer::start`] needs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DedicatedOptions {
    /// Where the socket binds: the container port (`0.0.0.0:7000`).
    pub bind: SocketAddr,
    /// The netcode server's configuration (protocol id, key, ...).
    pub netcode: ServerConfig,
    /// Slots (default 64).
    pub max_clients: usize,
    /// The name of the GameServer port clients use (default `netcode`).
    pub port_name: String,
    /// Which of `status.addresses` the server calls itself by, by type
    /// (default `None`: `status.address`); see [`public_address`]. The
    /// token service must use the same setting.
    ///
    /// [`public_address`]: crate::public_address
    pub address_type: Option<String>,
    /// The SDK's gRPC port (default `None`: `AGONES_SDK_GRPC_PORT`, else
    /// 9357, as the SDK reads it).
    pub sdk_port: Option<u16>,
    /// How long to wait for the sidecar, and for the status to name the
    /// address (default 30 s).
    pub sdk_timeout: Duration,
    /// Annotations besides the netcode ones (see [`Announcement`]).
    pub annotations: Vec<(String, String)>,
    /// The link's workings.
    pub link: LinkOptions,
    /// When the match ends.
    pub rules: MatchRules,
    /// Browsers over WebTransport beside UDP (default `None`: UDP only).
    pub browsers: Option<BrowserOptions>,
}

impl DedicatedOptions {
    /// Options with the defaults above for a server bound at `bind`.
    pub fn new(bind: SocketAddr, netcode: ServerConfig) -> Self {
        Self {
            bind,
            netcode,
            max_clients: 64,
            port_name: "netcode".into(),
            address_type: None,
            sdk_port: None,
            sdk_timeout: Duration::from_secs(30),
            annotations: Vec::new(),
            link: LinkOptions::default(),
            rules: MatchRules::default(),
            browsers: None,
        }
    }
}

/// A running netcode server that Agones knows as `Ready` (or, later,
/// `Allocated`). The game loop calls [`update`](Self::update) each frame
/// and plays with [`server_mut`](Self::server_mut) (payloads, batches) in
/// between.
#[derive(Debug)]
pub struct DedicatedServer {
    server: Server,
    link: Link,
    tracker: MatchTracker,
    /// This update's connect and disconnect events.
    events: Vec<ServerEvent>,
    /// The WebTransport endpoint, when the server takes browsers.
    browsers: Option<Browsers>,
}

impl DedicatedServer {
    /// Connects to the sidecar (waiting up to `sdk_timeout`), reads the
    /// public address from the GameServer status, binds and starts the
    /// netcode server, publishes the labels and annotations, opens the
    /// health stream, and only then reports `Ready`. Must run inside a
    /// multi-threaded tokio runtime that keeps running while the game loop
    /// does (its tasks make the SDK calls).
    pub async fn start(options: DedicatedOptions) -> Result<Self, StartError> {
        let started = tokio::time::Instant::now();
        let mut sdk = sidecar::connect(options.sdk_port, options.sdk_timeout).await?;
        let public = wait_for_public_address(
            &mut sdk,
            &options.port_name,
            options.address_type.as_deref(),
            started + options.sdk_timeout,
        )
        .await?;
        let mut announcement = Announcement::for_server(public, options.netcode.protocol_id);
        for (key, value) in &options.annotations {
            announcement = announcement
                .annotation(key.as_str(), value.as_str())
                .map_err(StartError::Metadata)?;
        }

        let mut server = bind_server(options.bind, public, options.netcode.clone())?;
        let browsers = match &options.browsers {
            Some(browser_options) => {
                let gameserver = sdk
                    .get_gameserver()
                    .await
                    .map_err(|error| StartError::sdk("GetGameServer", error))?;
                let port = public_port(&gameserver, &browser_options.port_name)
                    .map_err(StartError::BrowserPort)?;
                let browsers = Browsers::bind(browser_options, public, sdk.clone()).await?;
                server.attach_relay(browsers.endpoint().relay());
                announcement
                    .labels
                    .push((WEBTRANSPORT_LABEL.into(), "true".into()));
                announcement = announcement
                    .annotation(WEBTRANSPORT_URL_ANNOTATION, browser_url(public, port))
                    .and_then(|a| {
                        a.annotation(
                            CERT_HASH_ANNOTATION,
                            browsers.endpoint().certificate_hash_hex(),
                        )
                    })
                    .map_err(StartError::Metadata)?;
                log::info!(
                    target: TARGET,
                    "browsers: WebTransport bound at {} as {}",
                    browsers.endpoint().local_addr(),
                    browser_url(public, port)
                );
                Some(browsers)
            }
            None => None,
        };
        let admitted_from = server
            .start_nowait(options.max_clients)
            .map_err(StartError::Start)?;
        wait_past_second(admitted_from).await;

        announcement.publish(&mut sdk).await?;
        let mut link = Link::start(sdk.clone(), options.link.clone());
        link.tick(Instant::now());
        sdk.ready()
            .await
            .map_err(|error| StartError::sdk("Ready", error))?;
        log::info!(
            target: TARGET,
            "Ready: netcode server bound at {} as {public}, {} slots",
            options.bind,
            options.max_clients
        );
        Ok(Self {
            server,
            link,
            tracker: MatchTracker::new(options.rules),
            events: Vec::new(),
            browsers,
        })
    }

    /// One frame of the game loop at `now`: updates the server, reports
    /// each connect and disconnect to the players list, pings when due,
    /// and judges the match. `Some` says the match is over: call
    /// [`finish`](Self::finish). This update's events stay readable with
    /// [`events`](Self::events).
    pub fn update(&mut self, now: Instant) -> Option<MatchEnd> {
        self.server.update(now);
        self.take_events();
        self.link.tick(now);
        if let Some(browsers) = &mut self.browsers {
            browsers.tick(now);
        }
        let joined = self
            .events
            .iter()
            .filter(|event| matches!(event, ServerEvent::ClientConnected { .. }))
            .count();
        self.tracker.observe(
            now,
            self.link.allocated_at(),
            self.server.num_connected_clients(),
            joined,
        )
    }

    /// Moves the server's queued events into `events`, reporting players.
    fn take_events(&mut self) {
        self.events.clear();
        while let Some(event) = self.server.poll_event() {
            match event {
                ServerEvent::ClientConnected { client_id, .. } => {
                    log::info!(target: TARGET, "player {client_id} joined");
                    self.link.player_joined(client_id);
                }
                ServerEvent::ClientDisconnected {
                    client_id, reason, ..
                } => {
                    log::info!(target: TARGET, "player {client_id} left ({reason:?})");
                    self.link.player_left(client_id);
                }
            }
            self.events.push(event);
        }
    }

    /// The connects and disconnects of the last [`update`](Self::update).
    pub fn events(&self) -> &[ServerEvent] {
        &self.events
    }

    /// The netcode server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The netcode server, for payloads and batches. Stopping it here
    /// skips the players' removal from the list; use
    /// [`finish`](Self::finish).
    pub fn server_mut(&mut self) -> &mut Server {
        &mut self.server
    }

    /// The WebTransport endpoint, when the server takes browsers (for its
    /// stats, or an operator's certificate with `set_identity`: the new
    /// hash is published within a second).
    pub fn webtransport(&self) -> Option<&WebTransport> {
        self.browsers.as_ref().map(Browsers::endpoint)
    }

    /// The link to the sidecar, for its [`stats`](Link::stats).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Ends the server: stops it, so every client gets disconnect packets
    /// now (not a timeout later), then calls `Shutdown`, trying for at
    /// most `within`. An error says the sidecar never acknowledged it.
    pub async fn finish(mut self, within: Duration) -> Result<(), ShutdownError> {
        let connected = self.server.num_connected_clients();
        self.server.stop();
        self.take_events();
        log::info!(
            target: TARGET,
            "netcode server stopped; {connected} client(s) sent disconnect packets"
        );
        self.link.shutdown(within).await
    }
}

/// Sleeps until the wall clock has left the unix second before
/// `admitted_from` (the first second whose tokens the started server
/// admits), as `netcode_std::Server::start` waits, without blocking the
/// runtime's thread.
async fn wait_past_second(admitted_from: u64) {
    let admitted_at = Duration::from_secs(admitted_from);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    if let Some(wait) = admitted_at
        .checked_sub(now)
        .filter(|wait| *wait <= Duration::from_secs(1))
    {
        tokio::time::sleep(wait + Duration::from_millis(1)).await;
    }
}
