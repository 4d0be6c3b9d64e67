//! netcode-agones-server: the example dedicated server on Agones. An echo
//! server (each payload goes back to its sender) whose life follows its
//! GameServer: `Ready` once its socket is bound and the netcode server
//! started, health pings from the game loop, players tracked, and
//! `Shutdown` when its match is over or when Kubernetes stops it.
//!
//! `args.rs` holds the command line and `--help`; the game loop runs on
//! the main thread, the SDK on a small tokio runtime beside it.

mod args;
mod logger;
mod metrics;
mod signals;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use netcode_agones::netcode_std::ServerConfig;
use netcode_agones::netcode_std::proto::Key;
use netcode_agones::{DedicatedOptions, DedicatedServer, LinkOptions, MatchEnd, MatchRules};

use args::{Args, USAGE};
use metrics::Metrics;
use signals::Interrupt;

/// The longest the loop sleeps waiting for datagrams between frames.
const FRAME: Duration = Duration::from_millis(16);

/// How long `Shutdown` is tried after SIGTERM, within Kubernetes' grace
/// period (30 s by default) with room to spare.
const SHUTDOWN_ON_SIGNAL: Duration = Duration::from_secs(3);

/// How long `Shutdown` is tried when the match is over.
const SHUTDOWN_AT_END: Duration = Duration::from_secs(10);

/// Why the game loop stopped.
enum Stop {
    /// The match rules ended the match.
    Match(MatchEnd),
    /// A signal asked the server to stop.
    Interrupted,
}

fn main() -> ExitCode {
    logger::init();
    let args = match args::parse(std::env::args_os().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n(see --help)");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            log::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the key, starts the server on Agones, runs the loop, and ends
/// the server; the exit code says how it went.
fn run(args: Args) -> Result<ExitCode, String> {
    let key = read_key(&args)?;
    let interrupt = Interrupt::catch()?;
    // Bound before anything else, so that a taken port fails the start.
    let mut metrics = args.metrics.map(Metrics::serve).transpose()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("agones-sdk")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the SDK's runtime: {e}"))?;

    let mut options = DedicatedOptions::new(args.bind, ServerConfig::new(args.protocol_id, key));
    options.max_clients = args.max_clients;
    options.port_name = args.port_name.clone();
    options.browsers = args.webtransport.map(|bind| {
        let mut browsers = netcode_agones::BrowserOptions::new(bind);
        browsers.port_name = args.webtransport_port_name.clone();
        browsers
    });
    options.address_type = args.address_type.clone().or_else(|| {
        std::env::var(netcode_agones::ADDRESS_TYPE_VARIABLE)
            .ok()
            .filter(|kind| !kind.trim().is_empty())
    });
    options.sdk_timeout = args.sdk_timeout;
    options.annotations = args.annotations.clone();
    options.link = LinkOptions {
        health_period: args.health_period,
        players_list: args.players_list.clone(),
        ..LinkOptions::default()
    };
    options.rules = MatchRules {
        shutdown_when_empty: args.shutdown_when_empty,
        match_time: args.match_time,
    };

    let started = runtime.block_on(async {
        tokio::select! {
            started = DedicatedServer::start(options) => Some(started),
            () = interrupt.wait() => None,
        }
    });
    let mut dedicated = match started {
        Some(started) => started.map_err(|e| e.to_string())?,
        None => {
            log::info!("stopped before the server was ready");
            return Ok(ExitCode::SUCCESS);
        }
    };

    let stop = game_loop(&mut dedicated, &interrupt, metrics.as_mut());
    let stats = dedicated.link().stats();
    log::info!("link to the sidecar at the end: {stats:?}");
    match stop {
        Stop::Match(end) => {
            log::info!("match over: {end}; shutting down");
            match runtime.block_on(dedicated.finish(SHUTDOWN_AT_END)) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => Err(e.to_string()),
            }
        }
        Stop::Interrupted => {
            log::info!("stop requested; disconnecting every client");
            if let Err(e) = runtime.block_on(dedicated.finish(SHUTDOWN_ON_SIGNAL)) {
                log::warn!("{e}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The netcode private key from `--key-file`: 64 hex digits.
fn read_key(args: &Args) -> Result<Key, String> {
    let path = args.key_file.display();
    let text = std::fs::read_to_string(&args.key_file)
        .map_err(|e| format!("cannot read the key file {path}: {e}"))?;
    text.trim()
        .parse()
        .map_err(|e| format!("key file {path}: {e}"))
}

/// Runs frames until the match is over or a stop is requested: each frame
/// updates the server (pings, players, match rules ride along), records
/// the metrics, echoes every payload in one batch, then waits for
/// datagrams up to a frame.
fn game_loop(
    dedicated: &mut DedicatedServer,
    interrupt: &Interrupt,
    mut metrics: Option<&mut Metrics>,
) -> Stop {
    loop {
        let now = Instant::now();
        let end = dedicated.update(now);
        if let Some(metrics) = metrics.as_deref_mut() {
            metrics.frame(now, dedicated);
        }
        if let Some(end) = end {
            return Stop::Match(end);
        }
        let mut batch = dedicated.server_mut().batch();
        while let Some((client_index, packet)) = batch.receive_any() {
            // A client that left in between loses its echo; nothing else.
            let _ = batch.send_packet(client_index, packet.data());
            batch.free_packet(packet);
        }
        drop(batch);
        if interrupt.requested() {
            return Stop::Interrupted;
        }
        dedicated.server().wait(FRAME);
    }
}
