//! Tests of a link direction's impairments as the simulator core drives them.

use super::scripted::testutil::{long_packet, short_packet};
use super::*;
use quiclab_proto::{PacketType, VERSION_1};

const T0: Instant = Instant::ZERO;

fn imp(config: ImpairmentConfig, seed: u64) -> Impairments {
    Impairments::new(&config, DetRng::new(seed)).unwrap()
}

fn drops(rules: Vec<ScriptedDrop>) -> ImpairmentConfig {
    ImpairmentConfig {
        drops: rules,
        ..Default::default()
    }
}

fn is_pass(f: Fate) -> bool {
    matches!(f, Fate::Pass { .. })
}

const SCRIPTED: Fate = Fate::Drop(DropCause::Scripted);

fn initial(payload: usize) -> Vec<u8> {
    let mut d = Vec::new();
    long_packet(&mut d, PacketType::Initial, VERSION_1, payload);
    d.resize(1200, 0);
    d
}

fn initial_handshake() -> Vec<u8> {
    let mut d = Vec::new();
    long_packet(&mut d, PacketType::Initial, VERSION_1, 90);
    long_packet(&mut d, PacketType::Handshake, VERSION_1, 1000);
    d
}

fn one_rtt() -> Vec<u8> {
    let mut d = Vec::new();
    short_packet(&mut d, 100);
    d
}

#[test]
fn client_second_flight_lost() {
    // IMC '24: "second client flight is lost".
    let mut c = imp(
        drops(vec![ScriptedDrop {
            flight: Some(2),
            ..Default::default()
        }]),
        1,
    );
    assert!(is_pass(c.on_datagram(T0, &initial(300)))); // ClientHello, flight 1
    c.on_reverse_delivery(); // server's Initial arrives
    c.on_reverse_delivery(); // ...and its Handshake datagrams
    assert_eq!(c.on_datagram(T0, &initial_handshake()), SCRIPTED);
    assert_eq!(c.on_datagram(T0, &one_rtt()), SCRIPTED);
    c.on_reverse_delivery();
    assert!(is_pass(c.on_datagram(T0, &one_rtt()))); // flight 3
    let s = c.stats();
    assert_eq!((s.datagrams, s.scripted_drops, s.flight), (4, 2, 3));
}

#[test]
fn rest_of_server_first_flight_lost() {
    // IMC '24: "remaining first server flight is lost".
    let mut s = imp(
        drops(vec![ScriptedDrop {
            flight: Some(1),
            from_datagram: Some(2),
            ..Default::default()
        }]),
        1,
    );
    s.on_reverse_delivery(); // the ClientHello reached the server before it sent anything
    assert!(is_pass(s.on_datagram(T0, &initial_handshake())));
    for _ in 0..3 {
        assert_eq!(s.on_datagram(T0, &initial_handshake()), SCRIPTED);
    }
    s.on_reverse_delivery();
    assert!(is_pass(s.on_datagram(T0, &one_rtt())));
}

#[test]
fn flight_window_and_nth_datagram() {
    let mut l = imp(
        drops(vec![
            ScriptedDrop {
                flight: Some(1),
                from_datagram: Some(2),
                to_datagram: Some(3),
                ..Default::default()
            },
            ScriptedDrop {
                datagrams: vec![7, 9],
                ..Default::default()
            },
        ]),
        1,
    );
    let fates: Vec<bool> = (0..10).map(|_| is_pass(l.on_datagram(T0, &[]))).collect();
    let dropped: Vec<usize> = (1..=10).filter(|&i| !fates[i - 1]).collect();
    assert_eq!(dropped, vec![2, 3, 7, 9]);
    assert_eq!(l.scripted_fired(), &[2, 2]);
}

#[test]
fn packet_type_filter_and_max_drops() {
    let mut l = imp(
        drops(vec![
            ScriptedDrop {
                packet_type: Some(PacketTypeName::Handshake),
                ..Default::default()
            },
            ScriptedDrop {
                packet_type: Some(PacketTypeName::OneRtt),
                max_drops: Some(2),
                ..Default::default()
            },
        ]),
        1,
    );
    assert!(is_pass(l.on_datagram(T0, &initial(200))));
    assert_eq!(l.on_datagram(T0, &initial_handshake()), SCRIPTED);
    assert_eq!(l.on_datagram(T0, &one_rtt()), SCRIPTED);
    assert_eq!(l.on_datagram(T0, &one_rtt()), SCRIPTED);
    assert!(is_pass(l.on_datagram(T0, &one_rtt()))); // budget used up
    assert_eq!(l.on_datagram(T0, &initial_handshake()), SCRIPTED); // unlimited
    assert!(is_pass(l.on_datagram(T0, &[0xff, 0x00]))); // garbage: no type
    assert_eq!(l.scripted_fired(), &[2, 2]);
}

#[test]
fn packet_type_combines_with_flight() {
    // Only the Handshake-carrying datagrams of flight 1.
    let mut l = imp(
        drops(vec![ScriptedDrop {
            flight: Some(1),
            packet_type: Some(PacketTypeName::Handshake),
            ..Default::default()
        }]),
        1,
    );
    assert!(is_pass(l.on_datagram(T0, &initial(100))));
    assert_eq!(l.on_datagram(T0, &initial_handshake()), SCRIPTED);
    l.on_reverse_delivery();
    assert!(is_pass(l.on_datagram(T0, &initial_handshake())));
}

#[test]
fn scripted_takes_precedence_and_random_still_drawn() {
    let cfg = |drops: Vec<ScriptedDrop>| ImpairmentConfig {
        loss: LossModel::Bernoulli { p: 0.5 },
        drops,
        ..Default::default()
    };
    let mut a = imp(cfg(vec![]), 11);
    let mut b = imp(
        cfg(vec![ScriptedDrop {
            datagrams: (1..=20).collect(),
            ..Default::default()
        }]),
        11,
    );
    for i in 1..=200 {
        let (fa, fb) = (a.on_datagram(T0, &[]), b.on_datagram(T0, &[]));
        if i <= 20 {
            assert_eq!(fb, SCRIPTED);
        } else {
            assert_eq!(fa, fb, "datagram {i}");
        }
    }
}

#[test]
fn jitter_bounds_and_reorder_flag() {
    let mut l = imp(
        ImpairmentConfig {
            jitter: Some(Jitter {
                max_ms: 10.0,
                reorder: true,
            }),
            ..Default::default()
        },
        2,
    );
    let (mut lo, mut hi) = (Duration::MAX, Duration::ZERO);
    for _ in 0..10_000 {
        let Fate::Pass {
            extra_delay,
            reorder,
            duplicate,
            ..
        } = l.on_datagram(T0, &[])
        else {
            panic!("no loss configured");
        };
        assert!(reorder && !duplicate);
        assert!(extra_delay < Duration::from_millis(10));
        lo = lo.min(extra_delay);
        hi = hi.max(extra_delay);
    }
    assert!(lo < Duration::from_micros(100) && hi > Duration::from_micros(9_900));
    // Sub-ms precision is kept (ns, not ms).
    assert_ne!(hi.subsec_nanos() % 1_000_000, 0);

    let mut none = imp(ImpairmentConfig::default(), 2);
    assert_eq!(
        none.on_datagram(T0, &[]),
        Fate::Pass {
            extra_delay: Duration::ZERO,
            reorder: false,
            duplicate: false,
            corrupt: false,
        }
    );
}

#[test]
fn duplication_rate() {
    let mut l = imp(
        ImpairmentConfig {
            duplicate: 0.1,
            ..Default::default()
        },
        3,
    );
    let n = 100_000;
    for _ in 0..n {
        l.on_datagram(T0, &[]);
    }
    let rate = l.stats().duplicates as f64 / n as f64;
    assert!((rate - 0.1).abs() < 0.005, "rate {rate}");
}

fn all_random() -> ImpairmentConfig {
    ImpairmentConfig {
        loss: LossModel::Bernoulli { p: 0.1 },
        jitter: Some(Jitter {
            max_ms: 5.0,
            reorder: false,
        }),
        duplicate: 0.05,
        ..Default::default()
    }
}

fn fates(config: ImpairmentConfig, seed: u64, n: usize) -> Vec<Fate> {
    let mut l = imp(config, seed);
    (0..n).map(|_| l.on_datagram(T0, &[])).collect()
}

#[test]
fn same_seed_same_fates_different_seed_different() {
    assert_eq!(fates(all_random(), 42, 1000), fates(all_random(), 42, 1000));
    assert_ne!(fates(all_random(), 42, 1000), fates(all_random(), 43, 1000));
}

#[test]
fn streams_are_independent() {
    // Changing the duplication probability leaves losses and delays alone...
    let a = fates(all_random(), 5, 2000);
    let b = fates(
        ImpairmentConfig {
            duplicate: 0.5,
            ..all_random()
        },
        5,
        2000,
    );
    let strip = |f: &Fate| match *f {
        Fate::Drop(c) => Err(c),
        Fate::Pass { extra_delay, .. } => Ok(extra_delay),
    };
    assert!(a.iter().map(strip).eq(b.iter().map(strip)));
    // ...and changing the loss model leaves the delays of passed datagrams alone.
    let c = fates(
        ImpairmentConfig {
            loss: LossModel::None,
            ..all_random()
        },
        5,
        2000,
    );
    for (x, y) in a.iter().zip(&c) {
        if let Fate::Pass { .. } = x {
            assert_eq!(x, y);
        }
    }
}

#[test]
fn set_loss_keeps_counters() {
    let mut l = imp(
        drops(vec![ScriptedDrop {
            datagrams: vec![5],
            ..Default::default()
        }]),
        1,
    );
    for _ in 0..3 {
        assert!(is_pass(l.on_datagram(T0, &[])));
    }
    l.set_loss(LossModel::Periodic { p: 0.5 });
    // Periodic counts from the change: 4 passes, 5 is scripted (and periodic), 6 passes.
    assert!(is_pass(l.on_datagram(T0, &[])));
    assert_eq!(l.on_datagram(T0, &[]), SCRIPTED);
    assert!(is_pass(l.on_datagram(T0, &[])));
    assert_eq!(l.on_datagram(T0, &[]), Fate::Drop(DropCause::RandomLoss));
    l.set_loss(LossModel::None);
    assert!(is_pass(l.on_datagram(T0, &[])));
    let s = l.stats();
    assert_eq!((s.datagrams, s.scripted_drops, s.random_drops), (8, 1, 1));
}

/// The inert fast path (nothing configured: draws deferred) against the general path
/// (a Bernoulli model with p = 0 draws the same values and loses nothing), across loss
/// changes into and out of inertness: the fates and counters must be the same.
#[test]
fn inert_fast_path_matches_general_path() {
    let jitter = Some(Jitter {
        max_ms: 0.0,
        reorder: true,
    });
    let inert = ImpairmentConfig {
        jitter: jitter.clone(),
        ..Default::default()
    };
    let general = ImpairmentConfig {
        loss: LossModel::Bernoulli { p: 0.0 },
        jitter,
        ..Default::default()
    };
    let (mut a, mut b) = (imp(inert, 9), imp(general, 9));
    assert!(a.inert && !b.inert);
    let run = |a: &mut Impairments, b: &mut Impairments, n: usize| {
        for i in 0..n {
            if i % 7 == 3 {
                a.on_reverse_delivery();
                b.on_reverse_delivery();
            }
            assert_eq!(a.on_datagram(T0, &[]), b.on_datagram(T0, &[]));
            assert_eq!(a.stats(), b.stats());
        }
    };
    run(&mut a, &mut b, 300);
    let lossy = LossModel::Bernoulli { p: 0.3 };
    a.set_loss(lossy.clone());
    b.set_loss(lossy.clone());
    run(&mut a, &mut b, 300);
    a.set_loss(LossModel::None);
    b.set_loss(LossModel::Bernoulli { p: 0.0 });
    assert!(a.inert);
    run(&mut a, &mut b, 300);
    a.set_loss(lossy.clone());
    b.set_loss(lossy);
    run(&mut a, &mut b, 300);
    assert!(b.stats().random_drops > 100);
}

#[test]
fn validation_names_fields() {
    let err = |c: ImpairmentConfig| Impairments::new(&c, DetRng::new(0)).unwrap_err();
    assert_eq!(
        err(ImpairmentConfig {
            loss: LossModel::Bernoulli { p: f64::NAN },
            ..Default::default()
        }),
        "loss.p must be in [0, 1]"
    );
    assert_eq!(
        err(ImpairmentConfig {
            duplicate: 1.5,
            ..Default::default()
        }),
        "duplicate must be in [0, 1]"
    );
    assert_eq!(
        err(ImpairmentConfig {
            jitter: Some(Jitter {
                max_ms: -1.0,
                reorder: false
            }),
            ..Default::default()
        }),
        "jitter.max_ms must be finite and >= 0"
    );
    assert!(err(drops(vec![ScriptedDrop::default()])).starts_with("drops[0]"));
}

#[test]
fn scenario_toml_shape() {
    let c: ImpairmentConfig = toml::from_str(
        r#"
        loss = { model = "gilbert_elliott", p_good_bad = 0.01, p_bad_good = 0.3, loss_good = 0.0, loss_bad = 0.5 }
        duplicate = 0.01
        jitter = { max_ms = 2.5, reorder = true }
        [[drops]]
        flight = 1
        from_datagram = 2
        [[drops]]
        packet_type = "handshake"
        max_drops = 1
        "#,
    )
    .unwrap();
    assert!(c.validate().is_ok());
    assert_eq!(c.drops[1].packet_type, Some(PacketTypeName::Handshake));
    let p: ImpairmentConfig = toml::from_str("loss = { model = \"periodic\", p = 0.01 }").unwrap();
    assert_eq!(p.loss, LossModel::Periodic { p: 0.01 });
}

#[test]
fn ecn_remarking() {
    use EcnImpairment::*;
    let all = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce];
    let after = |i: EcnImpairment| all.map(|e| i.apply(e));
    assert_eq!(after(Bleach), [Ecn::NotEct; 4]);
    assert_eq!(
        after(RemarkEct1),
        [Ecn::NotEct, Ecn::Ect1, Ecn::Ect1, Ecn::Ce]
    );
    assert_eq!(after(MarkAllCe), [Ecn::NotEct, Ecn::Ce, Ecn::Ce, Ecn::Ce]);
    let c: ImpairmentConfig = toml::from_str("ecn = \"mark_all_ce\"").unwrap();
    let l = imp(c, 1);
    assert_eq!(l.remark(Ecn::Ect0), Ecn::Ce);
    // No ECN impairment: codepoints pass unchanged.
    assert_eq!(
        imp(ImpairmentConfig::default(), 1).remark(Ecn::Ect1),
        Ecn::Ect1
    );
    // Unknown values are refused, not defaulted.
    let e = toml::from_str::<ImpairmentConfig>("ecn = \"bleached\"").unwrap_err();
    assert!(e.to_string().contains("unknown variant"), "{e}");
}

fn at_s(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s)
}

/// Corruption: the configured share of passing datagrams is marked, and adding it
/// leaves every other fate (loss, jitter, duplication) unchanged.
#[test]
fn corruption_rate_and_independent_stream() {
    let corrupt = Some(Corrupt {
        p: 0.1,
        bytes: 1,
        within_bytes: None,
    });
    let with = ImpairmentConfig {
        corrupt: corrupt.clone(),
        ..all_random()
    };
    let mut l = imp(with.clone(), 9);
    let d = one_rtt();
    let n = 50_000;
    let (mut passed, mut marked) = (0, 0);
    for _ in 0..n {
        if let Fate::Pass { corrupt, .. } = l.on_datagram(T0, &d) {
            passed += 1;
            marked += u64::from(corrupt);
        }
    }
    let rate = marked as f64 / passed as f64;
    assert!((rate - 0.1).abs() < 0.006, "rate {rate}");
    let strip = |f: Fate| match f {
        Fate::Drop(c) => Err(c),
        Fate::Pass {
            extra_delay,
            reorder,
            duplicate,
            ..
        } => Ok((extra_delay, reorder, duplicate)),
    };
    let mut a = imp(all_random(), 4);
    let mut b = imp(with, 4);
    for _ in 0..5000 {
        assert_eq!(strip(a.on_datagram(T0, &d)), strip(b.on_datagram(T0, &d)));
    }
    // Corrupting flips bytes and counts; a config without corruption never marks.
    let mut x = d.clone();
    b.corrupt(&mut x);
    assert_ne!(x, d);
    assert_eq!(b.stats().corrupted, 1);
    let mut plain = imp(all_random(), 4);
    assert!(
        (0..1000).all(|_| !matches!(plain.on_datagram(T0, &d), Fate::Pass { corrupt: true, .. }))
    );
}

/// Blackholes drop everything inside their windows, nothing outside, and the random
/// streams keep their positions.
#[test]
fn blackhole_windows() {
    let config = ImpairmentConfig {
        blackhole: vec![Blackhole {
            from_s: 1.0,
            to_s: 2.0,
        }],
        ..Default::default()
    };
    let mut l = imp(config, 1);
    assert!(is_pass(l.on_datagram(at_s(0.5), &[])));
    assert_eq!(
        l.on_datagram(at_s(1.0), &[]),
        Fate::Drop(DropCause::Blackhole)
    );
    assert_eq!(
        l.on_datagram(at_s(1.9), &[]),
        Fate::Drop(DropCause::Blackhole)
    );
    assert!(is_pass(l.on_datagram(at_s(2.0), &[])));
    assert_eq!(l.stats().blackhole_drops, 2);
    assert_eq!(l.stats().datagrams, 4);
    // With random impairments: the fates after the window are those without it.
    let windowed = ImpairmentConfig {
        blackhole: vec![Blackhole {
            from_s: 0.0,
            to_s: 1.0,
        }],
        ..all_random()
    };
    let (mut a, mut b) = (imp(all_random(), 6), imp(windowed, 6));
    for i in 0..2000 {
        let t = at_s(i as f64 / 1000.0);
        let (x, y) = (a.on_datagram(t, &[]), b.on_datagram(t, &[]));
        if i >= 1000 {
            assert_eq!(x, y);
        }
    }
    // Keys as scenarios write them; bad windows are named.
    let c: ImpairmentConfig = toml::from_str(
        "blackhole = [{ from_s = 5, to_s = 7 }]\ncorrupt = { p = 0.3, within_bytes = 51 }",
    )
    .unwrap();
    assert_eq!(c.corrupt.as_ref().unwrap().bytes, 1);
    assert_eq!(c.blackhole[0].to_s, 7.0);
    assert!(toml::from_str::<ImpairmentConfig>("corrupt = { p = 0.1, byte = 2 }").is_err());
    let bad = ImpairmentConfig {
        blackhole: vec![Blackhole {
            from_s: 3.0,
            to_s: 2.0,
        }],
        ..Default::default()
    };
    assert!(Impairments::new(&bad, DetRng::new(1))
        .unwrap_err()
        .starts_with("blackhole[0].to_s"));
    // Absent keys serialize to nothing (recorded configs keep their bytes).
    let plain = toml::to_string(&ImpairmentConfig::default()).unwrap();
    assert!(!plain.contains("corrupt") && !plain.contains("blackhole"));
}
