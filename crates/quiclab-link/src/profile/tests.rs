//! Link profiles: the shipped files parse, realisations are deterministic and
//! prefix-consistent, each model does what its docs say, and bad files are named errors.

use super::*;

const LEO: &str = include_str!("../../../../scenarios/links/leo.toml");
const GEO: &str = include_str!("../../../../scenarios/links/geo.toml");
const CELLULAR: &str = include_str!("../../../../scenarios/links/cellular.toml");
const WIFI: &str = include_str!("../../../../scenarios/links/wifi.toml");

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// The timestamps of a Mahimahi text.
fn times(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

/// Opportunities in [from_ms, to_ms) of a Mahimahi text.
fn count(text: &str, from_ms: u64, to_ms: u64) -> usize {
    within(&times(text), from_ms, to_ms)
}

/// Opportunities in [from_ms, to_ms) of sorted timestamps.
fn within(t: &[u64], from_ms: u64, to_ms: u64) -> usize {
    t.partition_point(|&x| x < to_ms) - t.partition_point(|&x| x < from_ms)
}

fn mbps(opportunities: usize, ms: u64) -> f64 {
    opportunities as f64 * 1504.0 * 8.0 / (ms as f64 * 1000.0)
}

#[test]
fn shipped_profiles_parse_with_their_documented_defaults() {
    assert_eq!(Profile::parse(LEO).unwrap(), Profile::Leo(Leo::default()));
    assert_eq!(Profile::parse(GEO).unwrap(), Profile::Geo(Geo::default()));
    assert_eq!(
        Profile::parse(CELLULAR).unwrap(),
        Profile::Cellular(Cellular::default())
    );
    assert_eq!(
        Profile::parse(WIFI).unwrap(),
        Profile::Wifi(Wifi::default())
    );
}

#[test]
fn realisations_are_deterministic_and_prefix_consistent() {
    for text in [LEO, GEO, CELLULAR, WIFI] {
        let p = Profile::parse(text).unwrap();
        let a = p.realise(7, 20.0).unwrap();
        assert_eq!(a, p.realise(7, 20.0).unwrap());
        let long = p.realise(7, 40.0).unwrap();
        // The first 20 s of a 40 s realisation are the 20 s one (but its last line,
        // the closing opportunity at 20000 ms).
        for (short, long) in [(&a.up, &long.up), (&a.down, &long.down)] {
            let s = lines(short);
            assert_eq!(s.last(), Some(&"20000"));
            let n = s.len() - 1;
            assert_eq!(s[..n], lines(long)[..n]);
        }
        for (short, long) in [(&a.delay, &long.delay), (&a.loss, &long.loss)] {
            assert!(long.starts_with(short.as_str()), "{short} / {long}");
        }
        if !matches!(p, Profile::Geo(_)) {
            assert_ne!(a.down, p.realise(8, 20.0).unwrap().down);
        }
        // The texts parse as the trace files do.
        p.realise(7, 20.0)
            .unwrap()
            .link_trace(true, false, DetRng::new(1))
            .unwrap();
    }
}

/// LEO: the delay changes at each 15 s slot, a handover spike and loss burst of 100 ms
/// follow each slot start (not time 0), capacity per slot within its range.
#[test]
fn leo_slots_and_handovers() {
    let p = Profile::parse(LEO).unwrap();
    let r = p.realise(3, 61.0).unwrap();
    let loss: Vec<&str> = r.loss.lines().collect();
    assert_eq!(
        loss,
        [
            "time_s,loss_p",
            "0.000,0.01",
            "15.000,0.5",
            "15.100,0.01",
            "30.000,0.5",
            "30.100,0.01",
            "45.000,0.5",
            "45.100,0.01",
            "60.000,0.5",
            "60.100,0.01"
        ]
    );
    let delays = Steps::parse(&r.delay, DELAY_MS).unwrap();
    let at = |s: f64| {
        delays
            .at(quiclab_proto::Instant::ZERO + std::time::Duration::from_secs_f64(s))
            .unwrap()
    };
    for slot in 0..4 {
        let t = slot as f64 * 15.0;
        // One way: half of 40..60 ms plus up to 6.7 ms of jitter.
        let calm = at(t + 0.5);
        assert!((20.0..=33.35).contains(&calm), "{t}: {calm}");
        if slot > 0 {
            let spike = at(t + 0.05);
            assert!((35.0..=33.35 + 25.0).contains(&spike), "{t}: {spike}");
        }
    }
    for slot in 0..4u64 {
        let (a, b) = (slot * 15_000, slot * 15_000 + 15_000);
        let down = mbps(count(&r.down, a, b), b - a);
        let up = mbps(count(&r.up, a, b), b - a);
        assert!(
            (49.0..=201.0).contains(&down) && (4.9..=20.1).contains(&up),
            "{down} {up}"
        );
    }
}

#[test]
fn geo_is_constant() {
    let r = Profile::parse(GEO).unwrap().realise(1, 10.0).unwrap();
    assert_eq!(r.delay, "time_s,one_way_delay_ms\n0.000,300\n");
    assert_eq!(r.loss, "time_s,loss_p\n0.000,0\n");
    let down = mbps(count(&r.down, 0, 10_000), 10_000);
    assert!((down - 100.0).abs() < 0.1, "{down}");
    let up = mbps(count(&r.up, 0, 10_000), 10_000);
    assert!((up - 10.0).abs() < 0.1, "{up}");
}

/// Cellular: the mean capacity over a long realisation is the chain's stationary mean
/// (a reflecting birth-death chain with equal steps: the end levels weigh half the
/// others), the uplink its fraction, and outages leave whole 100 ms spans empty.
#[test]
fn cellular_mean_and_outages() {
    let c = Cellular::default();
    let r = Profile::Cellular(c.clone()).realise(11, 600.0).unwrap();
    let n = c.levels_mbps.len();
    let weights: Vec<f64> = (0..n)
        .map(|i| if i == 0 || i == n - 1 { 0.5 } else { 1.0 })
        .collect();
    let want = c
        .levels_mbps
        .iter()
        .zip(&weights)
        .map(|(l, w)| l * w)
        .sum::<f64>()
        / weights.iter().sum::<f64>();
    let down = mbps(count(&r.down, 0, 600_000), 600_000);
    assert!((down - want).abs() < 0.15 * want, "{down} vs {want}");
    let up = mbps(count(&r.up, 0, 600_000), 600_000);
    assert!(
        (up - want * c.up_fraction).abs() < 0.15 * want * c.up_fraction,
        "{up}"
    );
    let down_times = times(&r.down);
    let empty = (0..6000u64)
        .filter(|&i| within(&down_times, i * 100, i * 100 + 100) == 0)
        .count();
    assert!(empty > 100, "{empty} empty 100 ms spans");
}

/// Wi-Fi: deliveries come in aggregates of 32 at one millisecond, and stalls leave
/// gaps of at least 100 ms.
#[test]
fn wifi_aggregates_and_stalls() {
    let w = Wifi::default();
    let r = Profile::Wifi(w.clone()).realise(5, 120.0).unwrap();
    let times = times(&r.down);
    let mut runs = std::collections::BTreeMap::<u64, u64>::new();
    for &t in &times[..times.len() - 1] {
        *runs.entry(t).or_default() += 1;
    }
    assert!(runs.values().all(|&n| n % 32 == 0));
    let gaps = times.windows(2).filter(|p| p[1] - p[0] >= 100).count();
    assert!((3..=40).contains(&gaps), "{gaps} stalls in 120 s");
    let down = mbps(times.len(), 120_000);
    assert!((80.0..=200.0).contains(&down), "{down}");
}

#[test]
fn bad_profiles_are_named() {
    let e = |t: &str| Profile::parse(t).unwrap_err();
    assert!(e("model = \"leo\"\nslot = 15\n").contains("unknown field"));
    assert!(e("model = \"moon\"\n").contains("unknown variant"));
    assert!(e("model = \"leo\"\nrtt_ms = [60.0, 40.0]\n").starts_with("rtt_ms"));
    assert!(e("model = \"leo\"\nhandover_loss = 2.0\n").starts_with("handover_loss"));
    assert!(e("model = \"cellular\"\nstart_level = 9\n").starts_with("start_level"));
    assert!(e("model = \"cellular\"\nlevels_mbps = []\n").starts_with("levels_mbps"));
    assert!(e("model = \"wifi\"\naggregate = 65\n").starts_with("aggregate"));
    assert!(e("model = \"wifi\"\ndown_share = 0.8\nup_share = 0.5\n").starts_with("down_share"));
    assert!(e("model = \"geo\"\ndown_mbps = 0\n").starts_with("down_mbps"));
    // Too long a realisation for its rate is refused, not attempted.
    let huge = Profile::parse("model = \"geo\"\ndown_mbps = 100000\n").unwrap();
    assert!(huge.realise(1, 3600.0).unwrap_err().contains("more than"));
    assert!(huge.realise(1, 0.0).unwrap_err().starts_with("seconds"));
}
