//! Trace-driven links: Mahimahi's byte accounting and rates, delay steps (FIFO and
//! reordering), loss steps, and typed parse errors.

use super::*;
use crate::config::LinkSide;
use crate::duplex::Duplex;
use crate::impair::{ImpairmentConfig, Impairments};
use crate::link::{Link, Packet};
use crate::queue::{Queue, QueueConfig};
use std::net::{Ipv4Addr, SocketAddrV4};

const MS: u64 = 1_000_000;

fn at_ms(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

fn link(rate_bps: Option<u64>, delay_ms: u64, trace: LinkTrace) -> Link {
    let queue = QueueConfig::DropTail {
        packets: Some(1000),
        bytes: None,
    };
    Link::new(
        "l".into(),
        rate_bps,
        Duration::from_millis(delay_ms),
        65535,
        Queue::new(&queue, DetRng::new(1)).unwrap(),
        Impairments::new(&ImpairmentConfig::default(), DetRng::new(2)).unwrap(),
    )
    .with_trace(trace)
}

fn duplex(forward: Link) -> Duplex {
    let ret = link(
        None,
        0,
        LinkTrace::new(None, None, None, false, DetRng::new(3)),
    );
    Duplex::new([forward, ret], Vec::new())
}

/// A datagram whose IP packet is `wire` bytes, numbered `seq` in its first 8 bytes.
fn packet(wire: u64, seq: u64) -> Packet {
    let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1);
    let mut payload = vec![0; (wire - crate::link::IP_UDP_OVERHEAD) as usize];
    payload[..8].copy_from_slice(&seq.to_be_bytes());
    Packet::datagram(a, a, payload)
}

fn seq_of(p: &Packet) -> u64 {
    u64::from_be_bytes(p.payload[..8].try_into().unwrap())
}

fn mahimahi(text: &str) -> LinkTrace {
    let t = DeliveryTrace::parse(text).unwrap();
    LinkTrace::new(Some(t), None, None, false, DetRng::new(4))
}

/// Runs a saturating source of `wire`-byte packets (the queue never empties) over the
/// forward link until `end`, and returns (delivery time, wire bytes) of each delivery.
fn saturate(forward: Link, wire: u64, end: Instant) -> Vec<(Instant, u64)> {
    let mut d = duplex(forward);
    let mut now = Instant::ZERO;
    let mut seq = 0;
    let mut out = Vec::new();
    while now <= end {
        while d.link(LinkSide::Forward).queued_packets() < 50 {
            d.arrive(now, LinkSide::Forward, packet(wire, seq));
            seq += 1;
        }
        while let Some(x) = d.poll(now) {
            out.push((x.due, x.packet.wire_size()));
        }
        now = d.next_due().expect("a saturated link always has work");
    }
    out
}

/// Wire bit/s of the deliveries due in (from, to].
fn rate_between(deliveries: &[(Instant, u64)], from: Instant, to: Instant) -> f64 {
    let bytes: u64 = deliveries
        .iter()
        .filter(|(t, _)| *t > from && *t <= to)
        .map(|(_, b)| b)
        .sum();
    bytes as f64 * 8.0 / (to - from).as_secs_f64()
}

#[test]
fn one_line_trace_is_12_mbits() {
    let trace = DeliveryTrace::parse("1\n").unwrap();
    assert_eq!(trace.mean_rate_bps(), 12_032_000.0);
    // 1,500-byte packets, 2 s warm-up, then 8 s = 8000 whole 1 ms periods.
    let out = saturate(link(None, 0, mahimahi("1\n")), 1500, at_ms(10_000));
    let r = rate_between(&out, at_ms(2_000), at_ms(10_000));
    println!("one-line trace: {:.4} Mbit/s", r / 1e6);
    // Mahimahi's capacity is 1504 B/ms = 12.032 Mbit/s of IP bytes; 1500-byte packets
    // use all of it (an opportunity's 4 leftover bytes start the next packet).
    assert!((r / 12.032e6 - 1.0).abs() < 0.001, "{r}");
    assert!((r / 12.0e6 - 1.0).abs() < 0.01, "{r}");
}

#[test]
fn step_trace_is_followed_per_step() {
    // One 3 s period: 1 s at 12 Mbit/s (an opportunity each ms), 1 s at 24 (two each
    // ms), 1 s at 6 (one every other ms).
    let mut text = String::new();
    for ms in 1..=1000 {
        text.push_str(&format!("{ms}\n"));
    }
    for ms in 1001..=2000 {
        text.push_str(&format!("{ms}\n{ms}\n"));
    }
    for ms in (2002..=3000).step_by(2) {
        text.push_str(&format!("{ms}\n"));
    }
    let trace = mahimahi(&text);
    // The second period, after warm-up.
    let out = saturate(link(None, 20, trace), 1500, at_ms(6_100));
    for (k, mbps) in [12.0, 24.0, 6.0].into_iter().enumerate() {
        let from = 3_000 + 1_000 * k as u64 + 20;
        let r = rate_between(&out, at_ms(from), at_ms(from + 1_000));
        println!("step {k} ({mbps} Mbit/s): {:.4} Mbit/s", r / 1e6);
        assert!((r / (mbps * 1e6) - 1.0).abs() < 0.02, "step {k}: {r}");
        // Exactly Mahimahi's 1504-byte opportunities, within a packet.
        let capacity = mbps * 1504.0 / 1500.0 * 1e6;
        assert!((r / capacity - 1.0).abs() < 0.002, "step {k}: {r}");
    }
}

/// Byte accounting of `mahimahi.rs`: surplus bytes of an opportunity go to the next
/// packet at the same instant; a packet needing more spans opportunities; an idle
/// link's opportunities are lost.
#[test]
fn opportunities_are_shared_and_spanned() {
    let mut o = Opportunities::new(DeliveryTrace::parse("1\n").unwrap());
    // At 0 the first opportunity (1 ms) is ahead.
    assert_eq!(o.ready(Instant::ZERO), Some(at_ms(1)));
    assert_eq!(o.ready(at_ms(1)), None);
    // 1000 bytes leave at 1 ms, 504 left; the next 1000 take them and 496 of 2 ms.
    assert_eq!(o.send(at_ms(1), 1000), at_ms(1));
    assert_eq!(o.ready(at_ms(1)), None);
    assert_eq!(o.send(at_ms(1), 1000), at_ms(2));
    // 1008 bytes are left at 2 ms: a 1000-byte packet fits.
    assert_eq!(o.ready(at_ms(2)), None);
    assert_eq!(o.send(at_ms(2), 1000), at_ms(2));
    // 8 bytes left: a 4000-byte packet needs 3992 more, three opportunities (3, 4, 5).
    assert_eq!(o.ready(at_ms(2)), None);
    assert_eq!(o.send(at_ms(2), 4000), at_ms(5));
    // Idle until 9.5 ms: the opportunities at 6..9 are lost, the next is at 10.
    let t = Instant::ZERO + Duration::from_nanos(9 * MS + MS / 2);
    assert_eq!(o.ready(t), Some(at_ms(10)));
}

#[test]
fn equal_timestamps_and_wraparound() {
    // Period 5: opportunities at 0, 5, 5 in the first period, then 5 (=5+0), 10, 10...
    let mut o = Opportunities::new(DeliveryTrace::parse("0\n5\n5\n").unwrap());
    assert_eq!(o.ready(Instant::ZERO), None);
    // 1504 * 4 bytes: the opportunity at 0, then the three at 5 ms.
    assert_eq!(o.send(Instant::ZERO, 1504 * 4), at_ms(5));
    assert_eq!(o.ready(at_ms(5)), Some(at_ms(10)));
    assert_eq!(o.ready(at_ms(10)), None);
}

#[test]
fn packets_wait_in_the_queue_for_an_opportunity() {
    // A trace with one opportunity at 100 ms: a packet offered at 0 waits in the
    // queue (where AQMs measure its sojourn) and leaves at 100 ms.
    let mut d = duplex(link(None, 0, mahimahi("100\n")));
    d.arrive(Instant::ZERO, LinkSide::Forward, packet(1500, 0));
    assert_eq!(d.link(LinkSide::Forward).queued_packets(), 1);
    assert_eq!(d.next_due(), Some(at_ms(100)));
    assert!(d.poll(at_ms(99)).is_none());
    let x = d.poll(at_ms(100)).unwrap();
    assert_eq!(x.due, at_ms(100));
}

fn steps(text: &str, column: Column) -> Steps {
    Steps::parse(text, column).unwrap()
}

/// Sends a packet every 5 ms for 100 ms on an unlimited link whose delay drops from
/// 100 ms to 10 ms at 50 ms; returns the sequence numbers in delivery order with their
/// delivery times.
fn delay_drop(reorder: bool) -> Vec<(u64, Instant)> {
    let delay = steps("time_s,one_way_delay_ms\n0,100\n0.05,10\n", DELAY_MS);
    let trace = LinkTrace::new(None, Some(delay), None, reorder, DetRng::new(5));
    let mut d = duplex(link(None, 0, trace));
    let mut out = Vec::new();
    for i in 0..20 {
        d.arrive(at_ms(5 * i), LinkSide::Forward, packet(1200, i));
    }
    while let Some(t) = d.next_due() {
        while let Some(x) = d.poll(t) {
            out.push((seq_of(&x.packet), x.due));
        }
    }
    out
}

#[test]
fn fifo_under_a_delay_drop() {
    let out = delay_drop(false);
    let order: Vec<u64> = out.iter().map(|(s, _)| *s).collect();
    assert_eq!(order, (0..20).collect::<Vec<_>>());
    // Packet 9 (sent at 45 ms) arrives at 145 ms; packet 10 (50 ms, 10 ms delay) would
    // arrive at 60 ms but waits behind it.
    assert_eq!(out[9].1, at_ms(145));
    assert_eq!(out[10].1, at_ms(145));
    // Packet 19 (95 ms + 10 ms) is still held by packet 9.
    assert_eq!(out[19].1, at_ms(145));
}

#[test]
fn reorder_lets_packets_overtake() {
    let out = delay_drop(true);
    // Packets 10..19 (after the drop) arrive at 60..105 ms, before packet 0 (100 ms)
    // for the first nine of them.
    assert_eq!(out[0], (10, at_ms(60)));
    let first_old = out.iter().position(|(s, _)| *s == 0).unwrap();
    assert_eq!(first_old, 8);
    assert_eq!(out.iter().find(|(s, _)| *s == 9).unwrap().1, at_ms(145));
}

/// Offers `n` datagrams at each of the given times and returns the fraction lost at
/// each.
fn loss_rates(trace: &str, seed: u64, times_ms: &[u64], n: u64) -> Vec<f64> {
    let loss = LossTrace::parse(trace).unwrap();
    let trace = LinkTrace::new(None, None, Some(loss), false, DetRng::new(seed));
    let mut l = link(None, 0, trace);
    times_ms
        .iter()
        .map(|&t| {
            let before = l.stats.impairment_drops;
            for i in 0..n {
                l.arrive(at_ms(t), packet(100, i));
            }
            (l.stats.impairment_drops - before) as f64 / n as f64
        })
        .collect()
}

/// The burst form through a link: the stationary loss rate of each row's parameters,
/// nothing lost before the first row.
#[test]
fn loss_trace_burst_form_rate() {
    let n = 40_000;
    let text = "time_s,p_good_bad,p_bad_good,loss_good,loss_bad\n1,0.02,0.2,0,1\n2,0,1,0,0\n";
    let rates = loss_rates(text, 4, &[500, 1500, 2500], n);
    assert_eq!(rates[0], 0.0);
    let want = 0.02 / 0.22;
    // Bursts correlate the fates: a wider bound than the binomial one.
    assert!(
        (rates[1] - want).abs() < 0.15 * want,
        "{} vs {want}",
        rates[1]
    );
    // Leaving the bad state with certainty, never entering it again: no loss.
    assert_eq!(rates[2], 0.0);
}

#[test]
fn loss_trace_rate_matches_its_p() {
    let n = 20_000;
    let text = "time_s,loss_p\n1,0.1\n2,0.5\n3,0\n";
    let rates = loss_rates(text, 9, &[500, 1500, 2500, 3500], n);
    // Before the first row: no loss (the link's own impairments: none).
    assert_eq!(rates[0], 0.0);
    for (r, p) in [(rates[1], 0.1), (rates[2], 0.5)] {
        // Binomial: 4.5 standard deviations.
        let bound = 4.5 * (p * (1.0 - p) / n as f64).sqrt();
        assert!((r - p).abs() < bound, "p {p}: {r}");
    }
    assert_eq!(rates[3], 0.0);
    // The same seed gives the same fates; another seed others.
    assert_eq!(rates, loss_rates(text, 9, &[500, 1500, 2500, 3500], n));
    assert_ne!(rates, loss_rates(text, 10, &[500, 1500, 2500, 3500], n));
}

#[test]
fn mahimahi_errors_are_typed() {
    let e = |t: &str| DeliveryTrace::parse(t).unwrap_err();
    assert_eq!(e(""), MahimahiError::Empty);
    assert_eq!(
        e("1\nx2\n"),
        MahimahiError::NotInteger {
            line: 2,
            text: "x2".into()
        }
    );
    assert!(matches!(
        e("1.5\n"),
        MahimahiError::NotInteger { line: 1, .. }
    ));
    assert!(matches!(
        e("-1\n"),
        MahimahiError::NotInteger { line: 1, .. }
    ));
    assert_eq!(
        e("5\n3\n"),
        MahimahiError::Decreasing {
            line: 2,
            previous: 5,
            value: 3
        }
    );
    assert_eq!(e("0\n0\n"), MahimahiError::ZeroPeriod);
    assert_eq!(e("1\n\n2\n"), MahimahiError::BlankLine { line: 2 });
    // A long bad line is quoted in part.
    let long = "y".repeat(10_000);
    assert!(matches!(e(&long), MahimahiError::NotInteger { text, .. } if text.len() == 40));
}

#[test]
fn step_errors_are_typed() {
    let e = |t: &str, c| Steps::parse(t, c).unwrap_err();
    assert_eq!(e("time_s,loss_p\n", LOSS_P), StepsError::Empty);
    assert!(matches!(
        e("0,0.1,3\n", LOSS_P),
        StepsError::Fields { line: 1, .. }
    ));
    assert!(matches!(
        e("0;0.1\n", LOSS_P),
        StepsError::Fields { line: 1, .. }
    ));
    assert!(matches!(
        e("0,abc\n", LOSS_P),
        StepsError::NotNumber { line: 1, .. }
    ));
    assert!(matches!(
        e("0,1.5\n", LOSS_P),
        StepsError::BadValue { line: 1, .. }
    ));
    assert!(matches!(
        e("0,NaN\n", DELAY_MS),
        StepsError::BadValue { line: 1, .. }
    ));
    assert!(matches!(
        e("0,-1\n", DELAY_MS),
        StepsError::BadValue { line: 1, .. }
    ));
    assert!(matches!(
        e("-1,1\n", DELAY_MS),
        StepsError::BadTime { line: 1, .. }
    ));
    assert!(matches!(
        e("inf,1\n", DELAY_MS),
        StepsError::BadTime { line: 1, .. }
    ));
    assert!(matches!(
        e("2,1\n\n1,1\n", DELAY_MS),
        StepsError::Decreasing { line: 3, .. }
    ));
    // The loss header is not the delay file's.
    assert!(matches!(
        e("time_s,loss_p\n0,1\n", DELAY_MS),
        StepsError::NotNumber { line: 1, .. }
    ));
}

#[test]
fn load_names_the_key_and_file() {
    let dir = std::env::temp_dir().join(format!("quiclab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "3\n2\n").unwrap();
    let config = TraceConfig {
        mahimahi: Some(bad.display().to_string()),
        ..TraceConfig::default()
    };
    let e = LinkTrace::load(&config, DetRng::new(1)).unwrap_err();
    assert_eq!(e.key, "mahimahi");
    assert!(matches!(
        e.fault,
        TraceFault::Mahimahi(MahimahiError::Decreasing { .. })
    ));
    assert!(e.to_string().contains("bad.trace"), "{e}");
    let missing = TraceConfig {
        loss: Some(dir.join("none.csv").display().to_string()),
        ..TraceConfig::default()
    };
    let e = LinkTrace::load(&missing, DetRng::new(1)).unwrap_err();
    assert!(matches!(e.fault, TraceFault::Io(_)) && e.key == "loss");
    let e = LinkTrace::load(&TraceConfig::default(), DetRng::new(1)).unwrap_err();
    assert!(matches!(e.fault, TraceFault::NothingSet));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Scenario files spell the keys as documented, and an absent trace serializes to
/// nothing (recorded configs keep their bytes).
#[test]
fn config_keys() {
    let c: crate::config::LinkConfig = toml::from_str(
        "delay_ms = 5.0\ntrace = { mahimahi = \"a\", delay = \"d.csv\", loss = \"l.csv\", reorder = true }\n",
    )
    .unwrap();
    let t = c.trace.clone().unwrap();
    assert_eq!(t.mahimahi.as_deref(), Some("a"));
    assert!(t.reorder);
    let plain: crate::config::LinkConfig = toml::from_str("delay_ms = 5.0\n").unwrap();
    assert!(!toml::to_string(&plain).unwrap().contains("trace"));
    assert!(toml::from_str::<crate::config::LinkConfig>("trace = { bogus = 1 }\n").is_err());
}
