//! The simulator's own tests: delivery order, loss, duplication, jitter,
//! the bound on datagrams in flight, resets, and absurd configurations.

use crate::time::Instant;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use core::net::SocketAddr;
use core::time::Duration;

use super::*;
use crate::io::Output;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], port))
}

/// The point `millis` milliseconds after the epoch.
fn at(millis: u64) -> Instant {
    Instant::from_millis(millis)
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Sends `count` numbered datagrams from port 1 to port 2, one per
/// millisecond, then drains the network.
fn run(config: SimConfig, seed: u64, count: u32) -> (Vec<Delivered>, NetworkSimulator) {
    let mut sim = NetworkSimulator::new(config, seed);
    for i in 0..count {
        sim.send(at(u64::from(i)), addr(1), addr(2), &i.to_le_bytes());
    }
    let delivered = drain(&mut sim);
    (delivered, sim)
}

/// Jumps from delivery to delivery until the network is empty.
fn drain(sim: &mut NetworkSimulator) -> Vec<Delivered> {
    let mut out = Vec::new();
    while let Some(at) = sim.next_delivery_time() {
        while let Some(d) = sim.receive_any(at) {
            assert!(d.at <= at);
            out.push(d);
        }
    }
    out
}

fn number(d: &Delivered) -> u32 {
    u32::from_le_bytes(d.bytes[..4].try_into().unwrap())
}

fn check_invariant(sim: &NetworkSimulator) {
    let s = sim.stats();
    assert_eq!(
        s.sent + s.duplicated,
        s.lost + s.dropped_full + s.delivered + s.discarded + sim.in_flight() as u64,
        "{s:?}"
    );
}

fn lossy() -> SimConfig {
    SimConfig {
        latency: ms(100),
        jitter: ms(30),
        loss_percent: 20.0,
        duplicate_percent: 10.0,
        ..SimConfig::default()
    }
}

#[test]
fn seed_zero_still_delivers() {
    let (delivered, _) = run(lossy(), 0, 1000);
    assert!(delivered.len() > 500);
}

#[test]
fn same_seed_same_deliveries_different_seed_different_deliveries() {
    let (a, sim_a) = run(lossy(), 42, 2000);
    let (b, sim_b) = run(lossy(), 42, 2000);
    assert_eq!(a, b);
    assert_eq!(sim_a.stats(), sim_b.stats());

    let (c, _) = run(lossy(), 43, 2000);
    assert_ne!(a, c);
}

#[test]
fn perfect_network_delivers_everything_at_latency_in_send_order() {
    let config = SimConfig {
        latency: ms(50),
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 7);
    // Several datagrams at the same instant, to check the tie-break.
    for i in 0..100u32 {
        sim.send(at(u64::from(i / 4)), addr(1), addr(2), &i.to_le_bytes());
    }
    let delivered = drain(&mut sim);
    assert_eq!(delivered.len(), 100);
    for (i, d) in delivered.iter().enumerate() {
        let i = i as u32;
        assert_eq!(number(d), i);
        assert_eq!(d.at, at(u64::from(i / 4)) + ms(50));
        assert_eq!((d.from, d.to), (addr(1), addr(2)));
    }
    let s = sim.stats();
    assert_eq!(
        (s.sent, s.delivered, s.lost, s.duplicated),
        (100, 100, 0, 0)
    );
    check_invariant(&sim);
}

#[test]
fn default_config_delivers_immediately() {
    let mut sim = NetworkSimulator::new(SimConfig::default(), 1);
    sim.send(at(5), addr(1), addr(2), b"now");
    assert_eq!(sim.next_delivery_time(), Some(at(5)));
    let d = sim.receive(at(5), addr(2)).unwrap();
    assert_eq!(d.bytes, b"now");
    assert_eq!(d.at, at(5));
}

#[test]
fn nothing_is_delivered_early() {
    let config = SimConfig {
        latency: ms(10),
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 1);
    sim.send(at(0), addr(1), addr(2), b"x");
    assert_eq!(sim.next_delivery_time(), Some(at(10)));
    assert_eq!(sim.receive(at(9), addr(2)), None);
    assert_eq!(sim.receive_any(at(9)), None);
    assert_eq!(sim.in_flight(), 1);
    assert!(sim.receive(at(11), addr(2)).is_some());
    assert_eq!(sim.next_delivery_time(), None);
    assert_eq!(sim.receive_any(at(1000)), None);
}

#[test]
fn full_loss_delivers_nothing_and_counts() {
    let config = SimConfig {
        loss_percent: 100.0,
        duplicate_percent: 100.0,
        ..SimConfig::default()
    };
    let (delivered, sim) = run(config, 3, 1000);
    assert!(delivered.is_empty());
    let s = sim.stats();
    assert_eq!(
        (s.sent, s.lost, s.delivered, s.duplicated),
        (1000, 1000, 0, 0)
    );
    check_invariant(&sim);
}

#[test]
fn quarter_loss_is_within_statistical_band() {
    let config = SimConfig {
        loss_percent: 25.0,
        ..SimConfig::default()
    };
    for seed in [0, 1, 2, 0xDEAD_BEEF, u64::MAX] {
        let (delivered, sim) = run(config, seed, 10_000);
        let s = sim.stats();
        // Mean 2500, standard deviation about 43: ±300 is 7 sigma.
        assert!((2200..=2800).contains(&s.lost), "seed {seed}: {s:?}");
        assert_eq!(delivered.len() as u64, s.delivered);
        assert_eq!(s.sent, s.lost + s.delivered);
        check_invariant(&sim);
    }
}

#[test]
fn duplicates_appear_at_configured_rate_after_the_original() {
    let config = SimConfig {
        latency: ms(20),
        duplicate_percent: 10.0,
        ..SimConfig::default()
    };
    let (delivered, sim) = run(config, 99, 10_000);
    let s = sim.stats();
    // Mean 1000, standard deviation 30.
    assert!((800..=1200).contains(&s.duplicated), "{s:?}");
    assert_eq!(s.delivered, s.sent + s.duplicated);
    check_invariant(&sim);

    // Each datagram arrives once or twice; a duplicate arrives after its
    // original and less than a second later.
    let mut seen: BTreeMap<u32, Vec<Instant>> = BTreeMap::new();
    for d in &delivered {
        seen.entry(number(d)).or_default().push(d.at);
    }
    assert_eq!(seen.len(), 10_000);
    let mut twice = 0;
    for (i, times) in &seen {
        let sent_at = at(u64::from(*i));
        assert_eq!(times[0], sent_at + ms(20));
        match times.len() {
            1 => {}
            2 => {
                twice += 1;
                assert!(times[1] >= times[0] && times[1] < times[0] + ms(1000));
            }
            n => panic!("datagram {i} delivered {n} times"),
        }
    }
    assert_eq!(twice, s.duplicated);
}

#[test]
fn duplicate_delay_is_configurable() {
    let config = SimConfig {
        duplicate_percent: 100.0,
        duplicate_max_delay: Duration::ZERO,
        ..SimConfig::default()
    };
    let (delivered, sim) = run(config, 5, 100);
    assert_eq!(sim.stats().duplicated, 100);
    assert_eq!(delivered.len(), 200);
    for pair in delivered.chunks(2) {
        assert_eq!(pair[0], pair[1]);
    }
}

#[test]
fn jitter_reorders_but_never_delivers_before_send_time() {
    // Jitter larger than latency, so some delays get clamped to zero.
    let config = SimConfig {
        latency: ms(5),
        jitter: ms(20),
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 11);
    let mut sent_at = BTreeMap::new();
    for i in 0..2000u32 {
        let now = Instant::from_duration(Duration::from_micros(u64::from(i) * 500));
        sent_at.insert(i, now);
        sim.send(now, addr(1), addr(2), &i.to_le_bytes());
    }
    let delivered = drain(&mut sim);
    assert_eq!(delivered.len(), 2000);

    let mut reordered = 0;
    let mut clamped = 0;
    let mut spread = (Duration::MAX, Duration::ZERO);
    for pair in delivered.windows(2) {
        assert!(pair[0].at <= pair[1].at);
        if number(&pair[1]) < number(&pair[0]) {
            reordered += 1;
        }
    }
    for d in &delivered {
        let sent = sent_at[&number(d)];
        assert!(d.at >= sent);
        assert!(d.at <= sent + ms(25));
        let delay = d.at - sent;
        if delay == Duration::ZERO {
            clamped += 1;
        }
        spread = (spread.0.min(delay), spread.1.max(delay));
    }
    assert!(reordered > 100, "{reordered}");
    assert!(clamped > 100, "{clamped}");
    assert_eq!(spread.0, Duration::ZERO);
    assert!(spread.1 > ms(24), "{spread:?}");
}

#[test]
fn full_network_drops_and_counts_without_clobbering() {
    let config = SimConfig {
        latency: ms(1),
        max_in_flight: 10,
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 0);
    for i in 0..15u32 {
        sim.send(at(0), addr(1), addr(2), &i.to_le_bytes());
    }
    assert_eq!(sim.in_flight(), 10);
    assert_eq!(sim.stats().dropped_full, 5);
    check_invariant(&sim);
    let numbers: Vec<u32> = drain(&mut sim).iter().map(number).collect();
    assert_eq!(numbers, (0..10).collect::<Vec<_>>());

    // Room again once delivered.
    sim.send(at(2), addr(1), addr(2), b"again");
    assert_eq!(sim.in_flight(), 1);

    // A zero bound drops everything.
    sim.set_config(SimConfig {
        max_in_flight: 0,
        ..config
    });
    sim.send(at(2), addr(1), addr(2), b"dropped");
    assert_eq!(sim.in_flight(), 1);
    assert_eq!(sim.stats().dropped_full, 6);
    check_invariant(&sim);
}

#[test]
fn receive_returns_only_that_destination() {
    let config = SimConfig {
        latency: ms(10),
        jitter: ms(5),
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 21);
    for i in 0..300u32 {
        let to = addr(100 + (i % 3) as u16);
        sim.send(at(u64::from(i)), addr(1), to, &i.to_le_bytes());
    }
    let end = at(10_000);
    let mut for_101 = Vec::new();
    while let Some(d) = sim.receive(end, addr(101)) {
        assert_eq!(d.to, addr(101));
        for_101.push(d);
    }
    assert_eq!(for_101.len(), 100);
    assert!(for_101.windows(2).all(|w| w[0].at <= w[1].at));
    assert!(for_101.iter().all(|d| number(d) % 3 == 1));
    assert_eq!(sim.receive(end, addr(101)), None);
    assert_eq!(sim.receive(end, addr(999)), None);

    // The others are untouched.
    assert_eq!(sim.in_flight(), 200);
    let rest = drain(&mut sim);
    assert_eq!(rest.len(), 200);
    assert!(rest.iter().all(|d| d.to != addr(101)));
    check_invariant(&sim);
}

#[test]
fn per_destination_and_any_destination_interleave() {
    let mut sim = NetworkSimulator::new(lossy(), 8);
    for i in 0..500u32 {
        let to = addr(200 + (i % 4) as u16);
        sim.send(at(u64::from(i)), addr(1), to, &i.to_le_bytes());
    }
    let mut count = 0;
    let mut now = Instant::ZERO;
    while let Some(at) = sim.next_delivery_time() {
        now = now.max(at);
        if count % 2 == 0 {
            let to = addr(200 + (count / 2 % 4) as u16);
            while sim.receive(now, to).is_some() {
                count += 1;
            }
        }
        if sim.receive_any(now).is_some() {
            count += 1;
        }
    }
    assert_eq!(count, sim.stats().delivered);
    assert_eq!(sim.in_flight(), 0);
    check_invariant(&sim);
}

#[test]
fn set_config_cuts_and_restores_the_network() {
    let mut sim = NetworkSimulator::new(SimConfig::default(), 4);
    sim.send(at(0), addr(1), addr(2), b"before");
    let mut config = *sim.config();
    config.loss_percent = 100.0;
    sim.set_config(config);
    sim.send(at(1), addr(1), addr(2), b"cut");
    config.loss_percent = 0.0;
    sim.set_config(config);
    sim.send(at(2), addr(1), addr(2), b"after");
    let bytes: Vec<Vec<u8>> = drain(&mut sim).into_iter().map(|d| d.bytes).collect();
    assert_eq!(bytes, [b"before".to_vec(), b"after".to_vec()]);
    assert_eq!(sim.stats().lost, 1);
}

#[test]
fn reset_discards_in_flight() {
    let (_, mut sim) = run(SimConfig::default(), 1, 0);
    sim.set_config(SimConfig {
        latency: ms(10),
        ..SimConfig::default()
    });
    for port in 2..7 {
        sim.send(at(0), addr(1), addr(port), b"x");
    }
    sim.reset();
    assert_eq!(sim.in_flight(), 0);
    assert_eq!(sim.next_delivery_time(), None);
    assert_eq!(sim.receive(at(100), addr(2)), None);
    assert_eq!(sim.stats().discarded, 5);
    check_invariant(&sim);

    // Still usable afterwards.
    sim.send(at(0), addr(1), addr(2), b"y");
    assert_eq!(sim.receive(at(10), addr(2)).unwrap().bytes, b"y");

    sim.reset_stats();
    assert_eq!(sim.stats(), SimStats::default());
}

#[test]
fn absurd_configs_do_not_panic() {
    let configs = [
        SimConfig {
            loss_percent: f32::NAN,
            duplicate_percent: f32::NAN,
            ..SimConfig::default()
        },
        SimConfig {
            loss_percent: -50.0,
            duplicate_percent: f32::NEG_INFINITY,
            ..SimConfig::default()
        },
        SimConfig {
            loss_percent: 1e30,
            ..SimConfig::default()
        },
        SimConfig {
            duplicate_percent: f32::INFINITY,
            latency: Duration::MAX,
            jitter: Duration::MAX,
            duplicate_max_delay: Duration::MAX,
            ..SimConfig::default()
        },
        SimConfig {
            jitter: Duration::MAX,
            max_in_flight: usize::MAX,
            ..SimConfig::default()
        },
    ];
    let expect_lost = [0, 0, 100, 0, 0];
    let expect_duplicated = [0, 0, 0, 100, 0];
    for (i, config) in configs.into_iter().enumerate() {
        let mut sim = NetworkSimulator::new(config, i as u64);
        for j in 0..100u64 {
            sim.send(Instant::MAX - ms(j), addr(1), addr(2), &[]);
            sim.send(at(j), addr(1), addr(2), b"");
        }
        let s = sim.stats();
        assert_eq!(s.lost, 2 * expect_lost[i], "config {i}");
        assert_eq!(s.duplicated, 2 * expect_duplicated[i], "config {i}");
        let delivered = drain(&mut sim);
        assert!(delivered.iter().all(|d| d.bytes.is_empty()));
        check_invariant(&sim);
    }
}

#[test]
fn sim_output_sends_from_its_address_and_collects_events() {
    let config = SimConfig {
        latency: ms(3),
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 6);
    let mut events = Vec::new();
    {
        let mut out = sim.output(at(10), addr(1), &mut events);
        out.send(addr(2), b"hello");
        out.event("connected");
        out.send(addr(3), b"world");
    }
    assert_eq!(events, ["connected"]);

    // Generic use, as the protocol core would do.
    fn emit(out: &mut impl Output<u8>) {
        out.send(SocketAddr::from(([10, 0, 0, 1], 2)), b"generic");
        out.event(7);
    }
    let mut numbers = vec![];
    emit(&mut SimOutput {
        sim: &mut sim,
        from: addr(4),
        now: at(11),
        events: &mut numbers,
    });
    assert_eq!(numbers, [7]);

    let got: Vec<(SocketAddr, SocketAddr, Instant, Vec<u8>)> = drain(&mut sim)
        .into_iter()
        .map(|d| (d.from, d.to, d.at, d.bytes))
        .collect();
    assert_eq!(
        got,
        [
            (addr(1), addr(2), at(13), b"hello".to_vec()),
            (addr(1), addr(3), at(13), b"world".to_vec()),
            (addr(4), addr(2), at(14), b"generic".to_vec()),
        ]
    );
}

#[test]
fn delivered_bytes_are_mutable_and_independent() {
    let config = SimConfig {
        duplicate_percent: 100.0,
        duplicate_max_delay: Duration::ZERO,
        ..SimConfig::default()
    };
    let mut sim = NetworkSimulator::new(config, 2);
    sim.send(at(0), addr(1), addr(2), b"abc");
    let mut first = sim.receive(at(0), addr(2)).unwrap();
    first.bytes[0] = b'x';
    let second = sim.receive(at(0), addr(2)).unwrap();
    assert_eq!(first.bytes, b"xbc");
    assert_eq!(second.bytes, b"abc");
}
