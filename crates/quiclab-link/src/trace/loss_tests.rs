//! The loss trace's two forms: parsing by header, the burst form's stationary rate and
//! mean burst length, its state across rows, and its fixed draws.

use super::*;
use std::time::Duration;

fn at_s(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s)
}

/// Fates of `n` datagrams offered at `now` (all at one time).
fn fates(trace: &mut LossTrace, now: Instant, n: usize, rng: &mut DetRng) -> Vec<bool> {
    (0..n).map(|_| trace.lose(now, rng)).collect()
}

/// Mean length of the runs of consecutive losses.
fn mean_burst(f: &[bool]) -> f64 {
    let lost = f.iter().filter(|&&l| l).count();
    let bursts = f.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(f[0]);
    lost as f64 / bursts.max(1) as f64
}

#[test]
fn the_header_selects_the_form() {
    assert!(matches!(
        LossTrace::parse("time_s,loss_p\n0,0.1\n").unwrap(),
        LossTrace::Rate(_)
    ));
    assert!(matches!(
        LossTrace::parse("0,0.1\n").unwrap(),
        LossTrace::Rate(_)
    ));
    let burst = "\n time_s, p_good_bad, p_bad_good, loss_good, loss_bad\n0,0.1,0.5,0,1\n";
    assert!(matches!(
        LossTrace::parse(burst).unwrap(),
        LossTrace::Burst { bad: false, .. }
    ));
    // Typed errors name the line and the column.
    let e = LossTrace::parse(&format!("{BURST_HEADER}\n0,0.1,0.5,0\n")).unwrap_err();
    assert_eq!(
        e,
        StepsError::Fields {
            line: 2,
            count: 5,
            header: BURST_HEADER
        }
    );
    let e = LossTrace::parse(&format!("{BURST_HEADER}\n0,0.1,1.5,0,1\n")).unwrap_err();
    assert!(
        matches!(
            e,
            StepsError::BadValue {
                line: 2,
                column: "p_bad_good",
                ..
            }
        ),
        "{e:?}"
    );
    // Without the header, five columns are not a rate trace.
    assert!(matches!(
        LossTrace::parse("0,0.1,0.5,0,1\n").unwrap_err(),
        StepsError::Fields { count: 2, .. }
    ));
}

/// Loss rate = pi_bad * loss_bad + (1 - pi_bad) * loss_good with
/// pi_bad = p_gb / (p_gb + p_bg); with loss_bad = 1 and loss_good = 0 a loss burst is a
/// bad period, 1 / p_bg datagrams long on average (geometric).
#[test]
fn burst_rate_and_length() {
    for (p_gb, p_bg) in [(0.01, 0.25), (0.005, 0.1), (0.05, 0.5)] {
        let text = format!("{BURST_HEADER}\n0,{p_gb},{p_bg},0,1\n");
        let mut t = LossTrace::parse(&text).unwrap();
        let f = fates(&mut t, at_s(1.0), 400_000, &mut DetRng::new(17));
        let rate = f.iter().filter(|&&l| l).count() as f64 / f.len() as f64;
        let want = p_gb / (p_gb + p_bg);
        assert!((rate - want).abs() < 0.06 * want, "rate {rate} want {want}");
        let burst = mean_burst(&f);
        assert!(
            (burst - 1.0 / p_bg).abs() < 0.06 / p_bg,
            "burst {burst} want {}",
            1.0 / p_bg
        );
    }
    // Loss inside the states: loss_good 0.01, loss_bad 0.5.
    let text = format!("{BURST_HEADER}\n0,0.02,0.2,0.01,0.5\n");
    let mut t = LossTrace::parse(&text).unwrap();
    let f = fates(&mut t, at_s(0.0), 400_000, &mut DetRng::new(5));
    let rate = f.iter().filter(|&&l| l).count() as f64 / f.len() as f64;
    let pi = 0.02 / 0.22;
    let want = pi * 0.5 + (1.0 - pi) * 0.01;
    assert!((rate - want).abs() < 0.06 * want, "rate {rate} want {want}");
}

/// The state carries over a row change: a row that never enters the bad state but
/// leaves it slowly keeps losing until the burst ends.
#[test]
fn state_carries_over_rows() {
    let text = format!("{BURST_HEADER}\n0,1,0,0,1\n1,0,0.5,0,1\n");
    let mut t = LossTrace::parse(&text).unwrap();
    let mut rng = DetRng::new(3);
    // Row 1: enters the bad state at once and stays: everything lost.
    assert!(fates(&mut t, at_s(0.5), 100, &mut rng).iter().all(|&l| l));
    // Row 2: leaves with probability 1/2 per datagram, never re-enters.
    let f = fates(&mut t, at_s(1.5), 1000, &mut rng);
    let first_kept = f.iter().position(|&l| !l).unwrap();
    assert!(f[first_kept..].iter().all(|&l| !l));
    assert!(first_kept < 40);
}

/// Fixed draws: one per datagram in the rate form, two in the burst form, before the
/// first row too, so the fates after it do not depend on what came before.
#[test]
fn draws_are_fixed() {
    let mut rng = DetRng::new(8);
    let mut t = LossTrace::parse("time_s,loss_p\n5,0.5\n").unwrap();
    fates(&mut t, at_s(0.0), 10, &mut rng);
    let mut expect = DetRng::new(8);
    for _ in 0..10 {
        expect.next_f64();
    }
    assert_eq!(rng.next_f64(), expect.next_f64());
    let mut rng = DetRng::new(8);
    let mut t = LossTrace::parse(&format!("{BURST_HEADER}\n5,0.1,0.1,0,1\n")).unwrap();
    fates(&mut t, at_s(0.0), 10, &mut rng);
    let mut expect = DetRng::new(8);
    for _ in 0..20 {
        expect.next_f64();
    }
    assert_eq!(rng.next_f64(), expect.next_f64());
}
