//! A token history file whose writes fail (STANDARD.md: *Nonce Reuse and
//! Server Restarts*, "Persist the connect token history"): the server
//! sends nothing under a token whose record could not be made durable,
//! says so at most once a second however many requests arrive, keeps
//! serving its clients, and admits the token once writes work again.
//!
//! The failure is real: a file size limit (`RLIMIT_FSIZE`) just above the
//! file's size, so appending a record fails with `EFBIG` (the limit's
//! signal, `SIGXFSZ`, is blocked in the threads this test starts, the
//! writer thread included). The limit is the whole process's, so the test
//! runs alone in a child process of its own (`own_process`). Linux only.
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use log::Level;
use netcode_std::ClientState;
use netcode_std::proto::stats::DropReason;
use nix::sys::resource::{Resource, getrlimit, setrlimit};
use nix::sys::signal::{SigSet, Signal};

use crate::common::{config, key};
use crate::log_capture::{capture, lines};
use crate::memory::*;
use crate::own_process::alone_in_child;

/// The warnings (or worse) about the token history file logged so far.
fn history_warnings() -> usize {
    [Level::Error, Level::Warn]
        .into_iter()
        .map(|level| lines(level, "token history file").len())
        .sum()
}

#[test]
fn failed_writes_refuse_the_token_warn_once_a_second_and_heal() {
    if !alone_in_child(
        "history_failure::failed_writes_refuse_the_token_warn_once_a_second_and_heal",
    ) {
        return;
    }
    capture();
    // Threads started from here on (the history writer's) inherit the mask.
    let mut blocked = SigSet::empty();
    blocked.add(Signal::SIGXFSZ);
    blocked.thread_block().unwrap();

    let path = std::env::temp_dir().join(format!("netcode-failing-{}.history", std::process::id()));
    let mut config = config();
    config.token_history_file = Some(path.clone());
    let net = Net::new();
    let (mut server, admitted) = server(&net, config, 4);
    let token = admitted
        .builder(&key(), 1)
        .server_addresses([server.public_address()])
        .timeout_seconds(10)
        .expire_seconds(60)
        .generate()
        .unwrap();

    // Room for the file as it is (a header), and not one record more.
    let limits = getrlimit(Resource::RLIMIT_FSIZE).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    setrlimit(Resource::RLIMIT_FSIZE, size, limits.1).unwrap();

    let mut client = client(&net);
    client.connect(&token).unwrap();
    let mut clock = Clock(100.0);
    // Three seconds of requests at the client's 10 Hz: thirty attempts to
    // record the token, every one failing.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        run(
            &mut clock,
            1,
            &mut server,
            &mut [&mut client],
            all_connected,
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(client.state(), ClientState::SendingConnectionRequest);
    let stats = server.token_history_stats().unwrap();
    assert!(
        stats.records_failed >= 10,
        "every retry asked again: {stats:?}"
    );
    assert_eq!(stats.records_durable, 0);
    assert!(server.stats().dropped(DropReason::TokenNotDurable) >= 10);
    let warnings = history_warnings();
    assert!(
        (1..=4).contains(&warnings),
        "{warnings} warnings in 3 s for {} failures",
        stats.records_failed
    );

    // Writes work again: the client's next request is recorded and
    // answered.
    setrlimit(Resource::RLIMIT_FSIZE, limits.0, limits.1).unwrap();
    let healed = Instant::now();
    while client.state() != ClientState::Connected {
        assert!(healed.elapsed() < Duration::from_secs(5), "never admitted");
        run(
            &mut clock,
            1,
            &mut server,
            &mut [&mut client],
            all_connected,
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(server.token_history_stats().unwrap().records_durable, 1);
    drop(server);
    for suffix in ["", ".lock"] {
        let mut file = path.clone().into_os_string();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}
