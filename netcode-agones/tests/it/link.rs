//! The link on its own, driven by a loop of the test's: health pings come
//! only from the loop's ticks (a stalled loop stops them, a resumed one
//! starts them again); the allocation is seen on the watch; players are
//! tracked in the list, and a GameServer without the list turns tracking
//! off without troubling anything else.

use std::time::{Duration, Instant};

use crate::fake_sdk::FakeSdk;
use netcode_agones::{Link, LinkOptions, connect};

pub(crate) const DEADLINE: Duration = Duration::from_secs(15);

/// A runtime for the SDK's tasks, as the server binary has.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A link to `fake`, pinging every 50 ms of the loop's clock.
pub(crate) fn link(runtime: &tokio::runtime::Runtime, fake: &FakeSdk) -> Link {
    runtime.block_on(async {
        let sdk = connect(Some(fake.port()), DEADLINE)
            .await
            .expect("the fake answers");
        Link::start(
            sdk,
            LinkOptions {
                health_period: Duration::from_millis(50),
                retry_period: Duration::from_millis(100),
                ..LinkOptions::default()
            },
        )
    })
}

/// Runs the loop's ticks every 5 ms for `duration`.
pub(crate) fn run_loop(link: &mut Link, duration: Duration) {
    let start = Instant::now();
    while start.elapsed() < duration {
        link.tick(Instant::now());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_stalled_loop_stops_the_pings() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    let mut link = link(&runtime, &fake);

    run_loop(&mut link, Duration::from_millis(500));
    fake.wait_until("pings from the running loop", DEADLINE, |r| {
        r.health_pings >= 5
    });

    // The loop stalls: every ping it sent arrives, then nothing.
    let sent = link.stats().health_pings;
    let at_stall = fake
        .wait_until("every ping sent to arrive", DEADLINE, |r| {
            r.health_pings == sent
        })
        .health_pings;
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        fake.record().health_pings,
        at_stall,
        "pings came while the loop was stalled"
    );
    assert_eq!(link.stats().health_pings, sent);

    run_loop(&mut link, Duration::from_millis(300));
    fake.wait_until("pings again", DEADLINE, |r| r.health_pings >= at_stall + 3);
    let stats = link.stats();
    assert!(stats.sidecar_up);
    assert_eq!(stats.health_streams_opened, 1);
    assert_eq!(stats.health_streams_lost, 0);
}

#[test]
fn players_and_the_allocation() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    let mut link = link(&runtime, &fake);
    assert_eq!(link.allocated_at(), None);

    link.player_joined(1);
    link.player_joined(2);
    link.player_joined(3);
    link.player_left(2);
    fake.wait_until("players 1 and 3", DEADLINE, |r| {
        r.list("players") == ["1", "3"]
    });
    let wait_stats = |check: &dyn Fn(&netcode_agones::LinkStats) -> bool| {
        let start = Instant::now();
        while !check(&link.stats()) {
            assert!(start.elapsed() < DEADLINE, "{:?}", link.stats());
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_stats(&|s| s.players_tracked == 2 && s.players_pending == 0);

    fake.set_state("Allocated");
    let start = Instant::now();
    while link.allocated_at().is_none() {
        assert!(start.elapsed() < DEADLINE, "the allocation was not seen");
        link.tick(Instant::now());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(link.stats().gameserver_state, "Allocated");
}

#[test]
fn without_the_list_tracking_stops_and_nothing_else() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    fake.edit(|r| {
        r.lists.clear();
    });
    let mut link = link(&runtime, &fake);
    link.player_joined(9);
    link.player_joined(10);
    let start = Instant::now();
    while !link.stats().player_tracking_off {
        assert!(start.elapsed() < DEADLINE, "{:?}", link.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    // One refused call turned it off; the next player made none.
    link.player_joined(11);
    run_loop(&mut link, Duration::from_millis(300));
    assert_eq!(fake.record().count("AddListValue"), 1);
    let stats = link.stats();
    // One failed call (one warning), and the sidecar not reported lost.
    assert_eq!(stats.sdk_calls_failed, 1, "{stats:?}");
    assert!(stats.sidecar_up);
    assert_eq!(stats.players_pending, 0);
    assert!(fake.record().health_pings > 0);
}

#[test]
fn a_stalled_loop_makes_the_server_unhealthy() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    // spec.health: a ping due every 200 ms, Unhealthy after 3 missed.
    let period = Duration::from_millis(200);
    fake.check_health(period, 3);
    fake.set_state("Ready");
    let mut link = link(&runtime, &fake);

    // A running loop pings every 50 ms: the server stays Ready.
    run_loop(&mut link, Duration::from_millis(900));
    let running = fake.record();
    assert_eq!(running.state(), "Ready", "{running:#?}");

    // The loop stalls: three periods later, Agones marks it Unhealthy.
    let stalled = Instant::now();
    fake.wait_until("Unhealthy", DEADLINE, |r| r.state() == "Unhealthy");
    let last_ping = fake.record().last_health.expect("pings came");
    assert!(
        Instant::now().duration_since(last_ping) >= period * 3,
        "Unhealthy {:?} after the stall",
        stalled.elapsed()
    );
}
