//! HyStart++ (RFC 9406) end to end: configuration from TOML, a bulk transfer in the pair
//! harness over a path whose delay grows (the harness has no bottleneck queue), and a
//! controller-level bottleneck queue whose RTT samples come from a FIFO with a finite
//! buffer, where standard slow start overflows the buffer and HyStart++ does not.

use quiclab_proto::cc::{CongestionControl, CongestionController, HystartConfig, NewRenoConfig};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{Dir, Instant, RttEstimator, StreamError, TransportConfig};
use std::collections::VecDeque;
use std::time::Duration;

fn parse(text: &str) -> TransportConfig {
    let c: TransportConfig = toml::from_str(text).expect("config parses");
    c.validate().expect("config is valid");
    c
}

#[test]
fn new_reno_with_hystart_parses_from_toml_and_is_validated() {
    let c = parse("[congestion_control]\nalgorithm = \"new_reno\"\nhystart.enabled = true\n");
    assert_eq!(
        c.congestion_control,
        CongestionControl::NewReno(NewRenoConfig {
            hystart: HystartConfig::enabled(),
            ..NewRenoConfig::default()
        })
    );
    let c = parse(
        "[congestion_control]\nalgorithm = \"new_reno\"\n[congestion_control.hystart]\n\
         enabled = true\nmin_rtt_thresh_ms = 2\nmax_rtt_thresh_ms = 32\nmin_rtt_divisor = 4\n\
         n_rtt_sample = 16\ncss_growth_divisor = 2\ncss_rounds = 3\n\
         ack_growth_limit_segments = 8\n",
    );
    let CongestionControl::NewReno(reno) = &c.congestion_control else {
        panic!("new_reno expected");
    };
    assert_eq!(
        reno.hystart,
        HystartConfig {
            enabled: true,
            min_rtt_thresh_ms: 2,
            max_rtt_thresh_ms: 32,
            min_rtt_divisor: 4,
            n_rtt_sample: 16,
            css_growth_divisor: 2,
            css_rounds: 3,
            ack_growth_limit_segments: Some(8),
        }
    );
    // NewReno's default is off (RFC 9002 unchanged), CUBIC's on.
    let reno = parse("[congestion_control]\nalgorithm = \"new_reno\"\n");
    assert_eq!(reno.congestion_control, CongestionControl::default());
    let CongestionControl::NewReno(r) = reno.congestion_control else {
        panic!("new_reno expected");
    };
    assert!(!r.hystart.enabled);
    let cubic = parse("[congestion_control]\nalgorithm = \"cubic\"\n");
    let CongestionControl::Cubic(c) = cubic.congestion_control else {
        panic!("cubic expected");
    };
    assert_eq!(c.hystart, HystartConfig::enabled());
    // Unknown keys are errors.
    let text = "[congestion_control]\nalgorithm = \"cubic\"\nhystart.l = 8\n";
    assert!(toml::from_str::<TransportConfig>(text).is_err());
    // Out-of-range values name the key, for both controllers.
    for algorithm in ["new_reno", "cubic"] {
        for (bad, key) in [
            ("css_growth_divisor = 0", "css_growth_divisor"),
            ("css_rounds = 0", "css_rounds"),
            ("n_rtt_sample = 0", "n_rtt_sample"),
            ("min_rtt_divisor = 0", "min_rtt_divisor"),
            ("ack_growth_limit_segments = 0", "ack_growth_limit_segments"),
            ("min_rtt_thresh_ms = 17", "min_rtt_thresh_ms"),
            (
                "max_rtt_thresh_ms = 20000000000000\nmin_rtt_thresh_ms = 1",
                "max_rtt_thresh_ms",
            ),
        ] {
            let text = format!(
                "[congestion_control]\nalgorithm = \"{algorithm}\"\n\
                 [congestion_control.hystart]\n{bad}"
            );
            let c: TransportConfig = toml::from_str(&text).unwrap();
            let e = c.validate().unwrap_err();
            assert_eq!(e.key, format!("congestion_control.hystart.{key}"), "{bad}");
        }
    }
}

/// A bulk upload over 20 ms one-way links whose client-to-server delay starts growing
/// 300 ms into the transfer by 1 ms per 5 ms (a queue building up). Runs until the
/// client's controller leaves slow start or 3 s pass; returns (time into the transfer it
/// left slow start, cc name,
/// congestion events, datagrams lost).
fn upload_over_growing_delay(cc: &str) -> (Option<Duration>, &'static str, u64, u64) {
    let text = format!(
        "idle_timeout_ms = 600000\n[flow]\nmax_stream_receive_window = 67108864\n\
         max_receive_window = 67108864\n\
         initial_max_data = 67108864\ninitial_max_stream_data = 67108864\nsend_buffer = 67108864\n[congestion_control]\n{cc}\n"
    );
    let config = parse(&text);
    let link = LinkConfig::delay(Duration::from_millis(20));
    let mut pair = Pair::new(config.clone(), config, [link.clone(), link], 7);
    let limit = Instant::from_millis(60_000);
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .unwrap();
    let id = pair.client_conn().open_stream(Dir::Uni).unwrap();
    let chunk = vec![7u8; 65_536];
    let start = pair.now;
    let grow_from = start + Duration::from_millis(300);
    let mut server_stream = None;
    let mut buf = vec![0u8; 65_536];
    let mut left = None;
    let _ = pair.run_until(start + Duration::from_millis(3_000), |p| {
        if p.now > grow_from {
            let extra = (p.now - grow_from) / 5;
            p.links[0].delay = Duration::from_millis(20) + extra;
        }
        let c = p.client_conn();
        while let Ok(n) = c.write(id, &chunk) {
            if n == 0 {
                break;
            }
        }
        if !c.congestion_controller().in_slow_start() {
            left = Some(p.now);
            return true;
        }
        if let Some(s) = p.server_conn() {
            if server_stream.is_none() {
                server_stream = s.accept_stream(Dir::Uni);
            }
            if let Some(sid) = server_stream {
                loop {
                    match s.read(sid, &mut buf) {
                        Ok(r) if r.bytes > 0 && !r.fin => {}
                        Ok(_) | Err(StreamError::Blocked) => break,
                        Err(e) => panic!("read: {e}"),
                    }
                }
            }
        }
        false
    });
    let client = pair.client_conn();
    (
        left.map(|t| t - start),
        client.congestion_controller().name(),
        client.stats().congestion_events,
        pair.link_stats[0].lost,
    )
}

#[test]
fn hystart_leaves_slow_start_on_growing_delay_without_loss() {
    for cc in [
        "algorithm = \"new_reno\"\nhystart.enabled = true",
        "algorithm = \"cubic\"",
    ] {
        let (left, name, events, lost) = upload_over_growing_delay(cc);
        assert_eq!((events, lost), (0, 0), "{name}: no loss on this path");
        let left = left.unwrap_or_else(|| panic!("{name} stayed in slow start"));
        // Not while the delay was flat (the first 300 ms), but a few rounds after it
        // grew past HyStart++'s threshold (RFC 9406 §4.2: eta = 40 ms / 8 = 5 ms) and
        // Conservative Slow Start's 5 rounds. Both controllers run the same HyStart++
        // slow start, so they leave at the same instant; the instant itself is a
        // regression value of this deterministic run (recorded at commit c2a54c2),
        // within 1%.
        let expected = Duration::from_micros(888_599);
        assert!(
            left.abs_diff(expected) <= expected / 100,
            "{name} left slow start {left:?} into the upload, regression value {expected:?} \
             +-1% (delay growing from 300 ms on)"
        );
    }
    // Control: RFC 9002 slow start does not react to delay.
    let (left, name, events, _) = upload_over_growing_delay("algorithm = \"new_reno\"");
    assert_eq!((left, name, events), (None, "new_reno", 0));
}

/// A sender driving a controller through a FIFO bottleneck of `rate` bytes/ms with room
/// for `buffer` bytes, over a base RTT of 40 ms. Packets that find the buffer full are
/// dropped; a drop is declared lost (a congestion event) when a later packet is
/// acknowledged, as RFC 9002's packet threshold would. Returns the window at which the
/// controller left slow start, and whether that happened before the first loss.
fn through_bottleneck(mut cc: Box<dyn CongestionController>) -> (u64, bool) {
    const MDS: u64 = 1200;
    const RATE: u64 = 1200; // bytes per ms: 9.6 Mbit/s, a BDP of 48 kB at 40 ms.
                            // A deep buffer (15 BDPs, 600 ms of queue), the case HyStart++ is for: the round
                            // minimum lags the queue by a round (RFC 9406 §4.2 samples the previous flight), and
                            // CSS still grows 1.25x per round for CSS_ROUNDS, so a shallow buffer overflows
                            // before CSS is over.
    const BUFFER: u64 = 600 * MDS;
    let base = Duration::from_millis(40);
    let mut rtt = RttEstimator::new(Duration::from_millis(100));
    let mut now = Duration::ZERO;
    let mut link_free = Duration::ZERO;
    // In flight: (send time, ack arrival or None if dropped).
    let mut flight: VecDeque<(Duration, Option<Duration>)> = VecDeque::new();
    let mut in_flight = 0u64;
    let mut first_loss = None;
    let at = |d: Duration| Instant::from_nanos(d.as_nanos() as u64);
    for _ in 0..200_000 {
        // Send what the window allows, at `now`.
        while in_flight + MDS <= cc.window() {
            in_flight += MDS;
            cc.on_packet_sent(at(now), MDS, in_flight);
            let queued = link_free.saturating_sub(now).as_nanos() as u64 * RATE / 1_000_000;
            if queued + MDS > BUFFER {
                flight.push_back((now, None));
                continue;
            }
            link_free = link_free.max(now) + Duration::from_nanos(MDS * 1_000_000 / RATE);
            flight.push_back((now, Some(link_free + base)));
        }
        if !cc.in_slow_start() {
            return (cc.window(), first_loss.is_none());
        }
        // The next ACK: the oldest delivered packet (FIFO: in send order).
        let Some(pos) = flight.iter().position(|(_, ack)| ack.is_some()) else {
            panic!("nothing delivered");
        };
        let lost: Vec<_> = flight.drain(..pos).collect();
        let (sent, ack) = flight.pop_front().unwrap();
        now = ack.unwrap();
        rtt.update(now - sent, Duration::ZERO, true, Duration::from_millis(25));
        in_flight -= MDS;
        cc.on_packet_acked(at(now), at(sent), MDS, false, &rtt);
        if let Some((lost_sent, _)) = lost.last() {
            in_flight -= MDS * lost.len() as u64;
            first_loss.get_or_insert(now);
            cc.on_congestion_event(at(now), at(*lost_sent), false, MDS * lost.len() as u64);
        }
    }
    panic!("never left slow start");
}

#[test]
fn hystart_leaves_slow_start_before_the_bottleneck_buffer_overflows() {
    let reno = |hystart: HystartConfig| {
        CongestionControl::NewReno(NewRenoConfig {
            hystart,
            ..NewRenoConfig::default()
        })
        .build(1200)
    };
    // RFC 9002 slow start fills the buffer: it leaves slow start by a loss.
    let (_, before_loss) = through_bottleneck(reno(HystartConfig::default()));
    assert!(!before_loss);
    // HyStart++ sees the queue in the RTT and leaves without a loss, above the BDP
    // (48 kB) but below BDP + buffer (768 kB): at 603,300 bytes, a regression value of
    // this deterministic model (recorded at commit c2a54c2), within 1%, the same for
    // both controllers (one HyStart++ slow start).
    let expected = 603_300u64;
    let reno_window = through_bottleneck(reno(HystartConfig::enabled()));
    let cubic = CongestionControl::Cubic(Default::default()).build(1200);
    for (name, (window, before_loss)) in [
        ("NewReno", reno_window),
        ("CUBIC", through_bottleneck(cubic)),
    ] {
        assert!(before_loss, "{name} with HyStart++ lost first");
        assert!(
            window.abs_diff(expected) <= expected / 100,
            "{name} left slow start at a window of {window} bytes, regression value \
             {expected} +-1% (BDP 48 kB, buffer 720 kB)"
        );
    }
}
