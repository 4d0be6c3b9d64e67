//! Player tracking against the sidecar's real refusals (code Unknown with
//! a message; the capacity checked before duplicates): a value already
//! there or already gone counts as done, and a full list leaves a player
//! out only until another leaves.

use std::time::{Duration, Instant};

use netcode_agones::{Link, LinkStats};

use crate::fake_sdk::FakeSdk;
use crate::link::{DEADLINE, link, run_loop, runtime};

/// Runs the loop until `check` holds for the link's statistics.
fn wait_stats(link: &mut Link, what: &str, check: impl Fn(&LinkStats) -> bool) {
    let start = Instant::now();
    while !check(&link.stats()) {
        assert!(start.elapsed() < DEADLINE, "{what}: {:?}", link.stats());
        link.tick(Instant::now());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_duplicate_add_and_a_double_remove_count_as_done() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    // Player 5 is in the list already (an add whose answer was lost).
    fake.edit(|r| {
        r.lists.insert("players".into(), (10, vec!["5".into()]));
    });
    let mut link = link(&runtime, &fake);
    link.player_joined(5);
    wait_stats(&mut link, "player 5 tracked", |s| {
        s.players_tracked == 1 && s.players_pending == 0
    });
    assert_eq!(fake.record().count("AddListValue"), 1);

    // Player 5 leaves the list behind the link's back (a remove whose
    // answer was lost), then leaves the game.
    fake.edit(|r| {
        if let Some((_, values)) = r.lists.get_mut("players") {
            values.clear();
        }
    });
    link.player_left(5);
    wait_stats(&mut link, "player 5 gone", |s| {
        s.players_tracked == 0 && s.players_pending == 0
    });
    run_loop(&mut link, Duration::from_millis(300));
    let record = fake.record();
    assert_eq!(record.count("AddListValue"), 1, "{:?}", record.calls);
    assert_eq!(record.count("RemoveListValue"), 1, "{:?}", record.calls);
    let stats = link.stats();
    assert!(stats.sidecar_up, "{stats:?}");
    assert!(!stats.player_tracking_off, "{stats:?}");
}

#[test]
fn a_full_list_leaves_a_player_out_until_one_leaves() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    fake.edit(|r| {
        r.lists.insert("players".into(), (2, Vec::new()));
    });
    let mut link = link(&runtime, &fake);
    link.player_joined(1);
    link.player_joined(2);
    link.player_joined(3);
    wait_stats(&mut link, "1 and 2 tracked, 3 left out", |s| {
        s.players_tracked == 2 && s.players_pending == 0
    });
    assert_eq!(fake.record().list("players"), ["1", "2"]);

    // Player 1 leaves: player 3, still connected, takes the room.
    link.player_left(1);
    fake.wait_until("players 2 and 3", DEADLINE, |r| {
        r.list("players") == ["2", "3"]
    });
    // Player 4 is left out; player 2 leaves; player 4 gets in.
    link.player_joined(4);
    wait_stats(&mut link, "2 and 3 tracked, 4 left out", |s| {
        s.players_tracked == 2 && s.players_pending == 0
    });
    link.player_left(2);
    fake.wait_until("players 3 and 4", DEADLINE, |r| {
        r.list("players") == ["3", "4"]
    });
    let stats = link.stats();
    assert!(stats.sidecar_up, "{stats:?}");
    assert!(!stats.player_tracking_off, "{stats:?}");
}

#[test]
fn a_full_list_that_holds_the_player_already_counts_as_done() {
    let runtime = runtime();
    let fake = FakeSdk::start("127.0.0.1", 7000);
    // Full, and player 8 in it (the sidecar says "out of range" first).
    fake.edit(|r| {
        r.lists
            .insert("players".into(), (2, vec!["7".into(), "8".into()]));
    });
    let mut link = link(&runtime, &fake);
    link.player_joined(8);
    wait_stats(&mut link, "player 8 tracked", |s| {
        s.players_tracked == 1 && s.players_pending == 0
    });
    // When player 8 leaves, the link removes the value: it was tracked.
    link.player_left(8);
    fake.wait_until("player 8 removed", DEADLINE, |r| r.list("players") == ["7"]);
}
