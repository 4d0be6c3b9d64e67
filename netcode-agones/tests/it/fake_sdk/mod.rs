//! A fake Agones SDK server (the sidecar) for the tests: a tonic 0.12
//! gRPC server on 127.0.0.1 serving the services `agones.dev.sdk.SDK`
//! (stable) and `agones.dev.sdk.beta.SDK` (the list calls), written from
//! the method names and message fields of the SDK's published protos,
//! with the routing by gRPC path done by hand.
//!
//! It keeps what a test asks about ([`Record`]): the GameServer (state,
//! labels, annotations, address and ports), every call by name, the health
//! pings (count, time of the last, streams opened), the lists, the
//! watchers. A test drives it: [`FakeSdk::set_state`] changes the state
//! and pushes the GameServer to every watcher. It runs on a runtime of its
//! own thread, so [`FakeSdk::stop`] ends it as a dying sidecar ends
//! (listener and every connection closed at once) and
//! [`FakeSdk::restart`] brings it back on the same port, its record kept
//! (as the GameServer outlives a sidecar).
//!
//! Implemented: Ready, Allocate, Shutdown (answered once queued, applied
//! after [`APPLY_DELAY`]), Health (client stream, each message counted;
//! with [`FakeSdk::check_health`], Unhealthy after the failure threshold
//! of periods without a ping), GetGameServer, WatchGameServer (server
//! stream: the current GameServer, then the latest on each change, changes
//! in between coalesced), SetLabel and SetAnnotation (stored under
//! `agones.dev/sdk-KEY`, as Agones does);
//! beta GetList, AddListValue, RemoveListValue (refusals as the real SDK
//! server sends them: code UNKNOWN with its messages, the capacity checked
//! before duplicates, not the codes the proto comments promise). Everything else (Reserve,
//! counters, UpdateList, the alpha player tracking) answers UNIMPLEMENTED.
//!
//! How it follows the real sidecar, and where it still differs: README.md
//! beside this file. Here: the record and the fake's life; `services.rs`: the two services
//! and their calls; `messages.rs`: the messages the SDK crate does not
//! export.
#![allow(dead_code, unreachable_pub)]
// The handlers answer with `tonic::Status`, the error type gRPC services
// are written to; its size is tonic's.
#![allow(clippy::result_large_err)]

mod messages;
mod services;

use std::collections::{BTreeMap, VecDeque};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use agones::{GameServer, ObjectMeta, Port, Status};
use tokio::sync::{oneshot, watch};
use tokio_stream::wrappers::TcpListenerStream;

use services::{BetaSdk, StableSdk};

/// The prefix Agones' SDK server puts before label and annotation keys.
pub const METADATA_PREFIX: &str = "agones.dev/sdk-";

/// What the fake has seen and holds.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// The GameServer it reports.
    pub gameserver: GameServer,
    /// Every call, by method name, in order of arrival (each Health
    /// stream once).
    pub calls: Vec<String>,
    /// Health messages received, over all streams.
    pub health_pings: u64,
    /// When the last one came.
    pub last_health: Option<Instant>,
    /// Health streams opened.
    pub health_streams: u64,
    /// The beta lists: name to (capacity, values).
    pub lists: BTreeMap<String, (i64, Vec<String>)>,
    /// What the probe set with [`FakeSdk::probe_at_ready`] returned when
    /// Ready came (the first time).
    pub probed_at_ready: Option<bool>,
}

impl Record {
    /// The GameServer's state.
    pub fn state(&self) -> &str {
        self.gameserver.status.as_ref().map_or("", |s| &s.state)
    }

    /// How many times `method` was called.
    pub fn count(&self, method: &str) -> usize {
        self.calls.iter().filter(|c| *c == method).count()
    }

    /// The label `key` as set through the SDK (without the prefix).
    pub fn label(&self, key: &str) -> Option<&str> {
        let meta = self.gameserver.object_meta.as_ref()?;
        meta.labels
            .get(&format!("{METADATA_PREFIX}{key}"))
            .map(String::as_str)
    }

    /// The annotation `key` as set through the SDK (without the prefix).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        let meta = self.gameserver.object_meta.as_ref()?;
        meta.annotations
            .get(&format!("{METADATA_PREFIX}{key}"))
            .map(String::as_str)
    }

    /// The values of the list `name`.
    pub fn list(&self, name: &str) -> Vec<String> {
        self.lists
            .get(name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

/// How long the real sidecar holds a state change before it patches the
/// GameServer: its rate limit's default delay.
pub const APPLY_DELAY: Duration = Duration::from_millis(500);

/// The fake's state, shared by its services and the test.
struct Shared {
    record: Mutex<Record>,
    /// Run when Ready comes, before it is answered.
    ready_probe: Mutex<Option<Box<dyn Fn() -> bool + Send>>>,
    /// The GameServer as the watch streams see it: each gets the latest
    /// one when it changes, changes in between coalesced, as an informer
    /// delivers them.
    watched: watch::Sender<GameServer>,
    /// State changes asked for (Ready, Allocate, Shutdown) and not yet
    /// applied, oldest first.
    queued: Mutex<VecDeque<&'static str>>,
    /// How long a queued state change waits.
    apply_delay: Mutex<Duration>,
    /// Health checking: the period and the failure threshold of the
    /// GameServer's `spec.health`; `None`, off.
    health_check: Mutex<Option<(Duration, u32)>>,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            record: Mutex::default(),
            ready_probe: Mutex::default(),
            watched: watch::Sender::new(GameServer::default()),
            queued: Mutex::default(),
            apply_delay: Mutex::new(APPLY_DELAY),
            health_check: Mutex::default(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Records a call of `method` and changes the record with `change`.
    fn call<T>(&self, method: &str, change: impl FnOnce(&mut Record) -> T) -> T {
        let mut record = lock(&self.record);
        record.calls.push(method.to_owned());
        change(&mut record)
    }

    /// Sets the GameServer's state and pushes it to every watcher.
    fn set_state(&self, state: &str) {
        let gameserver = {
            let mut record = lock(&self.record);
            if let Some(status) = record.gameserver.status.as_mut() {
                status.state = state.to_owned();
            }
            record.gameserver.clone()
        };
        self.watched.send_replace(gameserver);
    }

    /// Queues a change to `state`, applied after the apply delay, in the
    /// order asked: the sidecar answers Ready, Allocate and Shutdown once
    /// queued. Runs on the fake's runtime.
    fn queue_state(self: &Arc<Self>, state: &'static str) {
        lock(&self.queued).push_back(state);
        let delay = *lock(&self.apply_delay);
        let shared = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            // Whichever wakes first applies the oldest change.
            let next = lock(&shared.queued).pop_front();
            if let Some(state) = next {
                shared.set_state(state);
            }
        });
    }

    /// Pushes the GameServer as it is to every watcher.
    fn push(&self) {
        let gameserver = lock(&self.record).gameserver.clone();
        self.watched.send_replace(gameserver);
    }

    /// Marks the GameServer `Unhealthy` once `threshold` periods have
    /// passed without a ping since the first one (the sidecar counts a
    /// failure each period without a ping, from the first health message;
    /// a ping resets the count; Unhealthy is for good).
    fn check_health(&self) {
        let Some((period, threshold)) = *lock(&self.health_check) else {
            return;
        };
        let unhealthy = {
            let record = lock(&self.record);
            let state = record.state();
            record.last_health.is_some_and(|last| {
                last.elapsed() >= period * threshold
                    && !matches!(state, "Unhealthy" | "Shutdown" | "")
            })
        };
        if unhealthy {
            self.set_state("Unhealthy");
        }
    }
}

/// A running (or stopped) fake sidecar.
pub struct FakeSdk {
    port: u16,
    shared: Arc<Shared>,
    running: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
}

impl FakeSdk {
    /// A fake on a free port of 127.0.0.1 reporting a `Scheduled`
    /// GameServer at `address` with the port `netcode` = `netcode_port`
    /// and a `players` list of capacity 10.
    pub fn start(address: &str, netcode_port: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake sidecar");
        Self::serve_on(listener, address, netcode_port)
    }

    /// As [`start`](Self::start), on `port` (a sidecar that a test starts
    /// late on the port the server was told).
    pub fn start_on(port: u16, address: &str, netcode_port: u16) -> Self {
        Self::serve_on(bind(port), address, netcode_port)
    }

    fn serve_on(listener: TcpListener, address: &str, netcode_port: u16) -> Self {
        let port = listener.local_addr().expect("the fake's address").port();
        let shared = Arc::new(Shared::default());
        {
            let mut record = lock(&shared.record);
            record.gameserver = GameServer {
                object_meta: Some(ObjectMeta {
                    name: "fake-gameserver".into(),
                    namespace: "default".into(),
                    ..ObjectMeta::default()
                }),
                spec: None,
                status: Some(Status {
                    state: "Scheduled".into(),
                    address: address.into(),
                    ports: vec![Port {
                        name: "netcode".into(),
                        port: i32::from(netcode_port),
                    }],
                    ..Status::default()
                }),
            };
            record.lists.insert("players".into(), (10, Vec::new()));
            shared.watched.send_replace(record.gameserver.clone());
        }
        let mut fake = Self {
            port,
            shared,
            running: None,
        };
        fake.serve(listener);
        fake
    }

    /// Its port on 127.0.0.1 (for `AGONES_SDK_GRPC_PORT`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A copy of what it holds now.
    pub fn record(&self) -> Record {
        lock(&self.shared.record).clone()
    }

    /// Changes what it holds (no push to watchers; see
    /// [`set_state`](Self::set_state)).
    pub fn edit(&self, change: impl FnOnce(&mut Record)) {
        change(&mut lock(&self.shared.record));
    }

    /// Sets the GameServer's state (`Allocated`, ...) and pushes the
    /// GameServer to every watcher, as an allocation does.
    pub fn set_state(&self, state: &str) {
        self.shared.set_state(state);
    }

    /// Pushes the GameServer as it is to every watcher.
    pub fn push(&self) {
        self.shared.push();
    }

    /// How long Ready, Allocate and Shutdown wait in the queue before the
    /// GameServer shows them ([`APPLY_DELAY`] unless set).
    pub fn apply_after(&self, delay: Duration) {
        *lock(&self.shared.apply_delay) = delay;
    }

    /// Turns health checking on, as a GameServer's `spec.health` with
    /// `periodSeconds` = `period` and `failureThreshold` = `threshold`.
    pub fn check_health(&self, period: Duration, threshold: u32) {
        *lock(&self.shared.health_check) = Some((period, threshold));
    }

    /// Has `probe` run when Ready comes, before the call is answered; its
    /// answer is kept as [`Record::probed_at_ready`]. For what must hold
    /// by the time a server says it is ready.
    pub fn probe_at_ready(&self, probe: impl Fn() -> bool + Send + 'static) {
        *lock(&self.shared.ready_probe) = Some(Box::new(probe));
    }

    /// Calls `check` on the record every 10 ms until it holds; panics
    /// saying `what` after `timeout`. Returns the record that held.
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        check: impl Fn(&Record) -> bool,
    ) -> Record {
        let start = Instant::now();
        loop {
            let record = self.record();
            if check(&record) {
                return record;
            }
            assert!(
                start.elapsed() < timeout,
                "gave up after {timeout:?} waiting for: {what}; the fake holds {record:#?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Ends it as a dying sidecar ends: the listener and every connection
    /// closed, its streams cut. Its record is kept.
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            let _ = stop.send(());
            thread.join().expect("the fake's thread");
        }
    }

    /// Serves again on the same port, with the record it had.
    pub fn restart(&mut self) {
        self.stop();
        let listener = bind(self.port);
        self.serve(listener);
    }

    /// Serves on `listener` from a thread with a runtime of its own;
    /// dropping that runtime closes every connection.
    fn serve(&mut self, listener: TcpListener) {
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let (stop, stopped) = oneshot::channel::<()>();
        let shared = self.shared.clone();
        let shared_health = self.shared.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the fake's runtime");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("the fake's listener");
                let server = tonic::transport::Server::builder()
                    .add_service(StableSdk(shared.clone()))
                    .add_service(BetaSdk(shared))
                    .serve_with_incoming(TcpListenerStream::new(listener));
                let health = async {
                    loop {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        shared_health.check_health();
                    }
                };
                tokio::select! {
                    _ = server => {}
                    _ = stopped => {}
                    () = health => {}
                }
            });
            // The runtime is dropped here, and every connection with it.
        });
        self.running = Some((stop, thread));
    }
}

impl Drop for FakeSdk {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A listener on 127.0.0.1:`port`, retried for a second (the port was
/// just closed).
fn bind(port: u16) -> TcpListener {
    let start = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return listener,
            Err(e) if start.elapsed() > Duration::from_secs(1) => {
                panic!("cannot bind the fake sidecar on port {port}: {e}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
