//! Unit tests of the AQMs against their RFCs' stated behaviour: DualPI2's ramp,
//! coupling and PI step (RFC 9332 A.1), PIE's probability update and the delay it holds
//! (RFC 8033), FQ-CoDel's new-flow priority, DRR and overflow (RFC 8290), RED's average
//! and probability.

use super::{EcnMark, FlowKey, Queue, QueueConfig};
use quiclab_proto::{DetRng, Ecn, Instant};

/// A test packet: its codepoint and flow.
#[derive(Debug, PartialEq)]
struct Pkt {
    ecn: Ecn,
    flow: u64,
}

impl EcnMark for Pkt {
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn mark_ce(&mut self) -> bool {
        if self.ecn.is_ect() {
            self.ecn = Ecn::Ce;
        }
        self.ecn.is_ect()
    }
}

impl FlowKey for Pkt {
    fn flow_key(&self) -> u64 {
        self.flow
    }
}

fn pkt(ecn: Ecn) -> Pkt {
    Pkt { ecn, flow: 0 }
}

fn us(t: u64) -> Instant {
    Instant::from_micros(t)
}

fn ms(t: u64) -> Instant {
    Instant::from_millis(t)
}

fn queue(toml_text: &str) -> Queue<Pkt> {
    let c: QueueConfig = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{e}"));
    Queue::new(&c, DetRng::new(11)).unwrap_or_else(|e| panic!("{e}"))
}

mod dualpi2 {
    use super::*;
    use crate::queue::{coupled, ramp};

    fn dualpi2() -> Queue<Pkt> {
        queue("discipline = \"dualpi2\"")
    }

    /// The number of L packets marked out of `n` when each leaves after `sojourn_us`
    /// with two more L packets behind it (so the ramp applies: A.2 Figure 5 line 5a,
    /// `lq.len() > Th_len` after the dequeue), p' = 0 (no C traffic).
    fn l_marks(sojourn_us: u64, n: u64) -> u64 {
        // No PI gain: the L head ages (A.2's curq) must not move p' here.
        let mut q = queue("discipline = \"dualpi2\"\nalpha = 0.0\nbeta = 0.0");
        let mut marked = 0;
        let mut dropped = Vec::new();
        for i in 0..n {
            // 100 µs apart: far below any PI update effect (C is empty, p' stays 0).
            let t = i * 100;
            for _ in 0..3 {
                q.enqueue(us(t), 1000, pkt(Ecn::Ect1)).unwrap();
            }
            let first = q.dequeue(us(t + sojourn_us), &mut dropped).unwrap();
            marked += u64::from(first.item.ecn == Ecn::Ce);
            // One packet left behind (= Th_len, not more): the ramp is suppressed.
            for _ in 0..2 {
                let rest = q.dequeue(us(t + sojourn_us), &mut dropped).unwrap();
                assert_eq!(rest.item.ecn, Ecn::Ect1, "marked with <= Th_len behind");
            }
        }
        assert!(dropped.is_empty());
        assert_eq!(q.dualpi2_probabilities().unwrap().0, 0.0);
        marked
    }

    /// RFC 9332 A.1 `laqm()`: below 800 µs of L sojourn never marked, from 1.2 ms
    /// always, linear between; de-randomized by `recur()`, which fires once its count
    /// exceeds 1 (strictly): n·p' marks, less the one the strict comparison holds back
    /// when n·p' is a whole number.
    #[test]
    fn l_ramp_from_800us_over_400us() {
        assert_eq!(l_marks(0, 200), 0);
        assert_eq!(l_marks(790, 200), 0);
        assert_eq!(l_marks(800, 200), 0);
        assert_eq!(l_marks(1201, 200), 199);
        assert_eq!(l_marks(5000, 200), 199);
        assert_eq!(l_marks(1000, 200), 99);
        assert_eq!(l_marks(900, 200), 49);
        assert_eq!(l_marks(1100, 200), 149);
        let (min, range) = (800_000, 400_000);
        assert_eq!(ramp(800_000, min, range), 0.0);
        assert_eq!(ramp(1_000_000, min, range), 0.5);
        assert_eq!(ramp(1_200_000, min, range), 1.0);
    }

    /// RFC 9332 §2.4: p_CL = k·p', p_C = p'², so in steady state p_C = (p_CL / k)².
    #[test]
    fn coupling() {
        for p in [0.0, 0.01, 0.1, 0.3, 0.49] {
            let (p_cl, p_c) = coupled(p, 2.0);
            assert!((p_cl - 2.0 * p).abs() < 1e-15);
            assert!((p_c - p * p).abs() < 1e-15);
            assert!((p_c - (p_cl / 2.0).powi(2)).abs() < 1e-15);
        }
        let (p_cl, p_c) = coupled(0.7, 2.0);
        assert_eq!(p_cl, 1.0, "p_CL saturates at 1");
        assert!((p_c - 0.49).abs() < 1e-15);
    }

    /// RFC 9332 A.1 Figure 2 defaults: Tupdate = min(target, RTT_max/3) = 15 ms,
    /// alpha = 0.1·Tupdate/RTT_max² = 0.15 Hz, beta = 0.3/RTT_max = 3 Hz
    /// (RTT_max = 100 ms); A.2 Figure 6 `dualpi2_update()`:
    /// p' += alpha·(curq − 15 ms) + beta·(curq − prevq), clamped to [0, 1].
    #[test]
    fn pi_update_numbers() {
        let (a, b) = (0.15, 3.0);
        assert!((crate::queue::dualpi2::default_alpha(15.0) - a).abs() < 1e-12);
        assert!((crate::queue::dualpi2::default_beta() - b).abs() < 1e-12);
        assert_eq!(crate::queue::dualpi2::default_tupdate_ms(15.0), 15.0);
        assert_eq!(crate::queue::dualpi2::default_tupdate_ms(50.0), 100.0 / 3.0);
        let mut q = dualpi2();
        q.enqueue(ms(0), 1000, pkt(Ecn::NotEct)).unwrap();
        // At 15 ms the head has waited 15 ms.
        q.enqueue(ms(15), 1000, pkt(Ecn::NotEct)).unwrap();
        let p1 = a * (0.015 - 0.015) + b * 0.015;
        let (p, p_cl, p_c) = q.dualpi2_probabilities().unwrap();
        assert!((p - p1).abs() < 1e-12, "{p} vs {p1}");
        assert!((p_cl - 2.0 * p1).abs() < 1e-12 && (p_c - p1 * p1).abs() < 1e-12);
        // At 30 ms it has waited 30 ms.
        q.enqueue(ms(30), 1000, pkt(Ecn::NotEct)).unwrap();
        let p2 = p1 + a * (0.030 - 0.015) + b * (0.030 - 0.015);
        assert!((q.dualpi2_probabilities().unwrap().0 - p2).abs() < 1e-12);
        // Drained: the delay falls to 0 and p' falls back (clamped at 0).
        let mut dropped = Vec::new();
        while q.dequeue(ms(31), &mut dropped).is_some() {}
        q.enqueue(ms(45), 1000, pkt(Ecn::Ect1)).unwrap();
        let p3 = (p2 + a * (0.0 - 0.015) + b * (0.0 - 0.030)).max(0.0);
        assert_eq!(p3, 0.0);
        assert!((q.dualpi2_probabilities().unwrap().0 - p3).abs() < 1e-12);
    }

    /// RFC 9332 A.2 Figure 6: curq is the larger of the two queues' head ages, so a
    /// standing L queue alone raises p'.
    #[test]
    fn pi_uses_greatest_queuing_time() {
        let mut q = dualpi2();
        q.enqueue(ms(0), 1000, pkt(Ecn::Ect1)).unwrap();
        q.enqueue(ms(10), 1000, pkt(Ecn::NotEct)).unwrap();
        // At 15 ms: L head 15 ms old, C head 5 ms old: curq = 15 ms.
        q.enqueue(ms(15), 1000, pkt(Ecn::NotEct)).unwrap();
        let p = q.dualpi2_probabilities().unwrap().0;
        assert!((p - 3.0 * 0.015).abs() < 1e-12, "{p}");
    }

    fn inner(q: &mut Queue<Pkt>) -> &mut crate::queue::dualpi2::DualPi2<Pkt> {
        match q.aqm.as_mut() {
            Some(crate::queue::Aqm::DualPi2(d)) => d,
            _ => panic!("not dualpi2"),
        }
    }

    /// Classification by ECT(1) and CE (RFC 9332 §2.5.1.1); C packets marked (ECT(0))
    /// or dropped (not-ECT) with p_C = p'²; L packets marked with p_CL = k·p'.
    #[test]
    fn classify_and_coupled_marking() {
        let mut q = dualpi2();
        inner(&mut q).set_p_prime(0.3); // p_C = 0.09 (< p_Cmax 0.25), p_CL = 0.6
        let mut dropped = Vec::new();
        let n = 10_000u64;
        for i in 0..n {
            // 1 µs apart: no PI update within the run (first at 16 ms).
            let t = us(i);
            for e in [Ecn::Ect0, Ecn::Ect1, Ecn::NotEct, Ecn::Ce] {
                q.enqueue(t, 100, pkt(e)).unwrap();
            }
            while q.dequeue(t, &mut dropped).is_some() {}
        }
        let sub = q.subqueues();
        let (l, c) = (&sub[0], &sub[1]);
        // L: ECT(1) and CE, 2n packets, marked at exactly 0.6 (recur), none dropped.
        assert_eq!(l.drops, 0);
        assert!(l.marks.abs_diff(2 * n * 6 / 10) <= 1, "{}", l.marks);
        // C: 2n packets (ECT(0), not-ECT alternating), recur(cq, p_C) fires on 9% of
        // them, exactly (A.1 Figure 3): ECT(0) ones are marked, not-ECT ones dropped.
        assert!((c.marks + c.drops).abs_diff(2 * n * 9 / 100) <= 1);
        assert!(c.marks > 0 && c.drops > 0, "{c:?}");
        assert_eq!(dropped.len() as u64, c.drops);
        assert!(dropped.iter().all(|p| p.ecn == Ecn::NotEct));
        assert_eq!(q.ecn_marks(), Some(c.marks + l.marks));
    }

    /// The window counters count only while recording (the measurement window), and
    /// at a fixed p' they give RFC 9332 §2.1's p_C = (p_L / k)² from the packets sent,
    /// marked and dropped per sub-queue: p' = 0.1, p_L = 0.2, p_C = 0.01.
    #[test]
    fn window_counts_give_coupled_probabilities() {
        let mut q = dualpi2();
        inner(&mut q).set_p_prime(0.1);
        let mut dropped = Vec::new();
        let mut run = |q: &mut Queue<Pkt>, from: u64, n: u64| {
            for i in from..from + n {
                // 1 µs apart: no PI update within the run, p' stays 0.1.
                q.enqueue(us(i), 100, pkt(Ecn::Ect1)).unwrap();
                q.enqueue(us(i), 100, pkt(Ecn::NotEct)).unwrap();
                while q.dequeue(us(i), &mut dropped).is_some() {}
            }
        };
        q.set_recording(false);
        run(&mut q, 0, 1000);
        q.set_recording(true);
        run(&mut q, 1000, 10_000);
        let sub = q.subqueues();
        let (l, c) = (&sub[0], &sub[1]);
        // Whole run: 11,000 packets per queue; window: the last 10,000.
        assert_eq!(l.window_packets, 10_000);
        assert!(l.marks.abs_diff(2200) <= 1 && l.window_marks.abs_diff(2000) <= 1);
        assert_eq!(c.window_packets + c.window_drops, 10_000, "{c:?}");
        assert!(c.drops.abs_diff(110) <= 1 && c.window_drops.abs_diff(100) <= 1);
        let p_l = l.window_marks as f64 / l.window_packets as f64;
        let p_c = c.window_drops as f64 / (c.window_packets + c.window_drops) as f64;
        assert!((p_c - (p_l / 2.0).powi(2)).abs() < 2e-4, "{p_l} {p_c}");
    }

    /// What was applied, per queue, in the window (`dualpi2_applied.rs`): at a fixed
    /// p' = 0.1 every L packet gets p_CL = 0.2 and every C packet p_C = 0.01; the mean
    /// of p'² over C packets is p_C, the signals match the window's marks and drops
    /// and all come from the coupling (the L queue never holds more than Th_len).
    #[test]
    fn applied_means_in_the_window() {
        let mut q = dualpi2();
        inner(&mut q).set_p_prime(0.1);
        let mut dropped = Vec::new();
        let mut run = |q: &mut Queue<Pkt>, from: u64, n: u64| {
            for i in from..from + n {
                q.enqueue(us(i), 100, pkt(Ecn::Ect1)).unwrap();
                q.enqueue(us(i), 100, pkt(Ecn::NotEct)).unwrap();
                while q.dequeue(us(i), &mut dropped).is_some() {}
            }
        };
        q.set_recording(false);
        run(&mut q, 0, 500);
        q.set_recording(true);
        run(&mut q, 500, 5000);
        let sub = q.subqueues();
        let (l, c) = (&sub[0], &sub[1]);
        let (la, ca) = (l.applied.as_ref().unwrap(), c.applied.as_ref().unwrap());
        let close = |x: Option<f64>, y: f64| (x.unwrap() - y).abs() < 1e-12;
        assert_eq!(la.decisions, 5000);
        assert!(close(la.p_prime_mean, 0.1) && close(la.p_coupled_mean, 0.2));
        assert!(close(la.p_native_mean, 0.0) && close(la.p_applied_mean, 0.2));
        assert_eq!((la.native_signals, la.coupled_signals), (0, l.window_marks));
        assert_eq!(ca.decisions, c.window_packets + c.window_drops);
        assert!(close(ca.p_prime_sq_mean, 0.01) && close(ca.p_coupled_mean, 0.01));
        assert_eq!(ca.coupled_signals, c.window_drops);
        // The measured probabilities against the applied means: exact to one signal.
        let p_l = l.window_marks as f64 / l.window_packets as f64;
        let p_c = c.window_drops as f64 / ca.decisions as f64;
        assert!((p_l - 2.0 * la.p_prime_mean.unwrap()).abs() <= 1.0 / 5000.0);
        assert!((p_c - ca.p_prime_sq_mean.unwrap()).abs() <= 1.0 / 5000.0);
        // Other disciplines have no `applied`.
        assert!(queue("discipline = \"drop_tail\"\npackets = 5")
            .subqueues()
            .is_empty());
    }

    /// Marks the ramp sets (its likelihood above p_CL) count as native: with p' = 0 and
    /// a 1.1 ms sojourn (ramp 0.75) every L mark is the ramp's.
    #[test]
    fn applied_attributes_ramp_marks() {
        let mut q = queue("discipline = \"dualpi2\"\nalpha = 0.0\nbeta = 0.0");
        let mut dropped = Vec::new();
        for i in 0..400u64 {
            let t = i * 100;
            for _ in 0..3 {
                q.enqueue(us(t), 1000, pkt(Ecn::Ect1)).unwrap();
            }
            for _ in 0..3 {
                q.dequeue(us(t + 1100), &mut dropped).unwrap();
            }
        }
        let sub = q.subqueues();
        let a = sub[0].applied.as_ref().unwrap();
        assert_eq!(a.decisions, 1200);
        assert!(sub[0].window_marks > 0);
        assert_eq!(
            (a.native_signals, a.coupled_signals),
            (sub[0].window_marks, 0)
        );
        // One packet in three leaves with more than Th_len behind it: ramp 0.75.
        assert!((a.p_native_mean.unwrap() - 0.25).abs() < 1e-9, "{a:?}");
    }

    /// The time average over PI updates: one update at 15 ms moves p' to
    /// beta·0.015 = 0.045 (the head waited 15 ms); the C queue then empties and p'
    /// falls back to 0 at 30 ms and stays there while idle, the skipped updates
    /// counted as zeros: updates at 15, 30, 45, 60 ms with p' = 0.045, 0, 0, 0.
    #[test]
    fn pi_time_average_over_updates() {
        let mut q = dualpi2();
        let mut dropped = Vec::new();
        q.enqueue(ms(0), 1000, pkt(Ecn::NotEct)).unwrap();
        q.enqueue(ms(15), 1000, pkt(Ecn::NotEct)).unwrap();
        while q.dequeue(ms(16), &mut dropped).is_some() {}
        q.enqueue(ms(61), 1000, pkt(Ecn::NotEct)).unwrap();
        let r = q.dualpi2_report().unwrap();
        assert_eq!(r.pi_updates, 4, "{r:?}");
        let p1 = 3.0 * 0.015;
        assert!(
            (r.p_prime_time_mean.unwrap() - p1 / 4.0).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r.p_prime_sq_time_mean.unwrap() - p1 * p1 / 4.0).abs() < 1e-12);
        assert!(queue("discipline = \"drop_tail\"\npackets = 5")
            .dualpi2_report()
            .is_none());
    }

    /// Overload (RFC 9332 §4.2.2, A.2 Figure 5): with p_C ≥ p_Cmax = 1/k² ECN no
    /// longer protects C packets; with p_CL ≥ p_Lmax = 1 L packets are dropped with
    /// p_C and every other one marked (p_CL = 1).
    #[test]
    fn overload_drops_ect() {
        let mut q = dualpi2();
        inner(&mut q).set_p_prime(0.6); // p_C = 0.36 ≥ 0.25
        let mut dropped = Vec::new();
        let n = 5000u64;
        for i in 0..n {
            let t = us(i);
            q.enqueue(t, 100, pkt(Ecn::Ect0)).unwrap();
            q.enqueue(t, 100, pkt(Ecn::Ect1)).unwrap();
            while q.dequeue(t, &mut dropped).is_some() {}
        }
        let sub = q.subqueues();
        assert_eq!(sub[1].marks, 0, "no C mark in overload");
        for s in &sub {
            assert!(
                s.drops.abs_diff(n * 36 / 100) <= 1,
                "{}: {}",
                s.name,
                s.drops
            );
        }
        // Every L packet not dropped is marked (one held back by recur's strict >).
        assert!(sub[0].marks.abs_diff(n - sub[0].drops) <= 1, "{:?}", sub[0]);
    }

    /// Below L overload (p_CL < 1) but with the C queue in overload (p_C ≥ 1/4):
    /// p' = 0.49 gives p_C = 0.2401 < 0.25, ECN still protects; the L queue is never
    /// dropped from while p_CL = 0.98 < p_Lmax.
    #[test]
    fn no_l_drop_below_saturation() {
        let mut q = dualpi2();
        inner(&mut q).set_p_prime(0.49);
        let mut dropped = Vec::new();
        for i in 0..2000u64 {
            q.enqueue(us(i), 100, pkt(Ecn::Ect1)).unwrap();
            q.enqueue(us(i), 100, pkt(Ecn::Ect0)).unwrap();
            while q.dequeue(us(i), &mut dropped).is_some() {}
        }
        let sub = q.subqueues();
        assert_eq!((sub[0].drops, sub[1].drops), (0, 0));
        assert!(
            sub[1].marks.abs_diff(2000 * 2401 / 10000) <= 1,
            "{:?}",
            sub[1]
        );
    }

    /// The time-shifted FIFO serves C once its head waited `tshift` (30 ms) longer.
    #[test]
    fn time_shifted_fifo() {
        // No PI gain: p' stays 0, nothing is dropped or marked.
        let mut q = queue("discipline = \"dualpi2\"\nalpha = 0.0\nbeta = 0.0");
        let mut dropped = Vec::new();
        q.enqueue(ms(0), 100, pkt(Ecn::NotEct)).unwrap();
        q.enqueue(ms(20), 100, pkt(Ecn::Ect1)).unwrap();
        // C's head is 20 ms older: within tshift, L goes first.
        assert_eq!(q.dequeue(ms(20), &mut dropped).unwrap().item.ecn, Ecn::Ect1);
        q.enqueue(ms(31), 100, pkt(Ecn::Ect1)).unwrap();
        // Now 31 ms older: C goes first.
        let first = q.dequeue(ms(31), &mut dropped).unwrap();
        assert_eq!(first.enqueued_at, ms(0));
    }

    /// Sojourn times per queue, and the shared limit.
    #[test]
    fn per_queue_sojourn_and_limit() {
        let mut q = queue("discipline = \"dualpi2\"\npackets = 2");
        let mut dropped = Vec::new();
        q.enqueue(ms(0), 100, pkt(Ecn::NotEct)).unwrap();
        q.enqueue(ms(0), 100, pkt(Ecn::Ect1)).unwrap();
        assert!(q.enqueue(ms(0), 100, pkt(Ecn::Ect1)).is_err());
        assert!(q.dequeue(ms(1), &mut dropped).is_some()); // L, 1 ms
        assert!(q.dequeue(ms(3), &mut dropped).is_some()); // C, 3 ms
        let sub = q.subqueues();
        assert_eq!((sub[0].drops, sub[1].drops), (1, 0));
        let l = sub[0].sojourn_p50_ms.unwrap();
        let c = sub[1].sojourn_p50_ms.unwrap();
        assert!((l - 1.0).abs() < 0.02 && (c - 3.0).abs() < 0.05, "{l} {c}");
        let all = q.sojourn().quantile_ms(0.5).unwrap();
        assert!((all - 2.0).abs() < 0.05, "{all}");
    }

    #[test]
    fn bad_knobs_are_refused() {
        for (knob, needle) in [
            ("k = 0.0", "queue.k"),
            ("target_ms = -1.0", "queue.target_ms"),
            ("tupdate_ms = 0.0", "queue.tupdate_ms"),
            ("range_us = 0.0", "queue.range_us"),
            ("alpha = nan", "queue.alpha"),
            ("packets = 0", "queue.packets"),
            ("tshift_ms = -1.0", "queue.tshift_ms"),
        ] {
            let c: QueueConfig =
                toml::from_str(&format!("discipline = \"dualpi2\"\n{knob}")).unwrap();
            let e = c.validate().unwrap_err();
            assert!(e.contains(needle), "{knob}: {e}");
        }
        assert!(
            toml::from_str::<QueueConfig>("discipline = \"dualpi2\"\nnope = 1").is_err(),
            "unknown keys are refused"
        );
    }
}

mod pie {
    use super::*;
    use crate::queue::pie::{Pie, PieConfig};
    use crate::queue::scaled_step;

    fn pie() -> Pie<Pkt> {
        Pie::new(&PieConfig::default(), DetRng::new(5)).unwrap()
    }

    /// RFC 8033 §4.4: the burst allowance counts down by Tupdate and is granted again
    /// only when p = 0 and both the current and the previous delay are below half the
    /// target (the history is updated after the test).
    #[test]
    fn burst_allowance_needs_two_quiet_updates() {
        let mut p = pie();
        assert_eq!(p.burst_allowance_ns(), 150_000_000);
        p.update(0); // quiet: p stays 0
        assert_eq!(p.drop_prob(), 0.0);
        assert_eq!(p.burst_allowance_ns(), 150_000_000, "quiet: renewed");
        p.force(0.0); // allowance spent
        p.update(20_000_000); // 20 ms: p rises
        assert!(p.drop_prob() > 0.0);
        p.force(0.0);
        p.update(0); // current quiet, previous (20 ms) not: no new allowance
        assert_eq!(p.burst_allowance_ns(), 0);
        p.force(0.0);
        p.update(0); // two quiet updates in a row
        assert_eq!(p.burst_allowance_ns(), 150_000_000);
    }

    /// RFC 8033 §4.2: p = alpha·(qdelay − target) + beta·(qdelay − qdelay_old), scaled
    /// by the probability's magnitude.
    #[test]
    fn drop_probability_update() {
        let mut p = pie();
        // 20 ms of delay from 0: raw step 0.125·0.005 + 1.25·0.020 = 0.025625, ÷2048
        // while the probability is below 10⁻⁶.
        p.update(20_000_000);
        let p1 = 0.025625 / 2048.0;
        assert!((p.drop_prob() - p1).abs() < 1e-15, "{}", p.drop_prob());
        // Steady 20 ms: step 0.125·0.005 = 0.000625, ÷128 (p1 ≈ 1.25e-5 is in
        // [1e-5, 1e-4)).
        p.update(20_000_000);
        let p2 = p1 + 0.000625 / 128.0;
        assert!((p.drop_prob() - p2).abs() < 1e-15);
        assert_eq!(scaled_step(1.0, 0.5), 1.0);
        assert_eq!(scaled_step(1.0, 0.05), 0.5);
        assert_eq!(scaled_step(1.0, 0.005), 0.125);
        assert_eq!(scaled_step(1.0, 0.0005), 1.0 / 32.0);
        assert_eq!(scaled_step(1.0, 0.0), 1.0 / 2048.0);
    }

    /// RFC 8033 §5.5: above 10 % the probability rises by at most 2 % per update; and
    /// a delay above 250 ms adds 2 %.
    #[test]
    fn capped_step_and_large_delay() {
        let mut p = pie();
        let mut updates = 0;
        while p.drop_prob() < 0.1 {
            p.update(100_000_000);
            updates += 1;
        }
        assert!(updates > 10, "auto-tuning slows the start: {updates}");
        let before = p.drop_prob();
        assert!(before < 0.2, "{before}");
        p.update(200_000_000); // raw step 0.125·0.185 + 1.25·0.1 ≫ 0.02
        assert!((p.drop_prob() - (before + 0.02)).abs() < 1e-12);
        let mut p = pie();
        p.update(300_000_000);
        let raw = (0.125 * 0.285 + 1.25 * 0.3) / 2048.0;
        assert!((p.drop_prob() - (raw + 0.02)).abs() < 1e-12);
    }

    /// Unresponsive arrivals at 1.25× the service rate: PIE settles the drop
    /// probability near 20 % and the queuing delay near its 15 ms target, where a
    /// drop-tail queue would fill up.
    #[test]
    fn holds_target_delay_under_overload() {
        let mut q = queue("discipline = \"pie\"");
        let mut dropped = Vec::new();
        let mut sojourn_late = Vec::new();
        // Service: one packet per 0.4 ms; arrivals: 5 per 1.6 ms (1.25×).
        for tick in 0..100_000u64 {
            let t = us(tick * 400);
            if tick % 4 == 0 {
                for _ in 0..5 {
                    let _ = q.enqueue(t, 1000, pkt(Ecn::NotEct));
                }
            }
            if let Some(p) = q.dequeue(t, &mut dropped) {
                if tick > 50_000 {
                    sojourn_late.push((t - p.enqueued_at).as_secs_f64() * 1e3);
                }
            }
        }
        sojourn_late.sort_by(f64::total_cmp);
        let median = crate::quantile::percentile(&sojourn_late, 0.5);
        assert!((12.0..=18.0).contains(&median), "median {median} ms");
        let p = q.pie_probability().unwrap();
        assert!((0.15..=0.25).contains(&p), "drop probability {p}");
    }

    /// §5.4 de-randomization: with p = 0.3 no drop comes before the accumulated
    /// probability reaches 0.85 (the 3rd arrival since the last drop), and one is
    /// certain once it reaches 8.5 (the 29th); without it, drops can come back to back.
    #[test]
    fn derandomized_drop_gaps() {
        let gaps = |derandomize: bool| {
            let c = PieConfig {
                derandomize: Some(derandomize),
                ..PieConfig::default()
            };
            let mut p: Pie<Pkt> = Pie::new(&c, DetRng::new(9)).unwrap();
            p.force(0.3);
            let (mut gaps, mut since) = (Vec::new(), 0);
            for _ in 0..5000 {
                since += 1;
                // At t = 0: no update runs (the first is at 15 ms).
                if p.enqueue(ms(0), 100, pkt(Ecn::NotEct)).is_err() {
                    gaps.push(since);
                    since = 0;
                }
                // Three queued: above §4.1's two-packet floor.
                while p.len_packets() > 3 {
                    p.dequeue(ms(0));
                }
            }
            gaps
        };
        let d = gaps(true);
        assert!(d.len() > 100);
        assert!(d.iter().all(|g| (3..=29).contains(g)), "{d:?}");
        let r = gaps(false);
        assert!(r.iter().any(|&g| g < 3), "{r:?}");
    }

    /// §5.1: with ecn on, ECN-capable arrivals PIE would drop are marked instead
    /// while p ≤ 10 %. A 30-packet standing queue (30 ms at one packet per ms, arrivals
    /// at the service rate) for 2 s: p grows from 0 but stays below 10 %.
    #[test]
    fn marks_below_threshold() {
        let run = |ecn: bool| {
            let mut q = queue(&format!("discipline = \"pie\"\necn = {ecn}"));
            let mut dropped = Vec::new();
            let (mut marks_out, mut refused) = (0, 0);
            for t in 0..2000u64 {
                for _ in 0..(if t == 0 { 30 } else { 1 }) {
                    refused += u64::from(q.enqueue(ms(t), 1000, pkt(Ecn::Ect0)).is_err());
                }
                if let Some(p) = q.dequeue(ms(t), &mut dropped) {
                    marks_out += u64::from(p.item.ecn == Ecn::Ce);
                }
            }
            (
                q.ecn_marks(),
                marks_out,
                refused,
                q.pie_probability().unwrap(),
            )
        };
        let (marks, out, refused, p) = run(true);
        assert!(p > 0.0 && p <= 0.1, "p = {p}");
        // Marked packets still queued at the end are counted but not yet out.
        let marks = marks.unwrap();
        assert!(
            out > 5 && marks >= out && marks - out <= 30,
            "{marks} {out}"
        );
        assert_eq!(refused, 0, "no ECT packet dropped below 10 %");
        let (marks, out, refused, _) = run(false);
        assert_eq!((marks, out), (None, 0));
        assert!(refused > 5, "{refused}");
    }
}

mod fq_codel {
    use super::*;

    fn flow(f: u64) -> Pkt {
        Pkt {
            ecn: Ecn::NotEct,
            flow: f,
        }
    }

    /// RFC 8290 §4.2 new-flow priority: a sparse flow's packet overtakes a bulk
    /// backlog and leaves next.
    #[test]
    fn sparse_flow_goes_first() {
        let mut q = queue("discipline = \"fq_codel\"");
        let mut dropped = Vec::new();
        for _ in 0..100 {
            q.enqueue(ms(0), 1200, flow(1)).unwrap();
        }
        // Serve a few bulk packets so the bulk flow is on the old list.
        for _ in 0..3 {
            assert_eq!(q.dequeue(ms(1), &mut dropped).unwrap().item.flow, 1);
        }
        q.enqueue(ms(2), 100, flow(2)).unwrap();
        let next = q.dequeue(ms(2), &mut dropped).unwrap();
        assert_eq!(next.item.flow, 2);
        assert_eq!(next.enqueued_at, ms(2), "zero sojourn");
    }

    /// §4.2 DRR: two backlogged flows with different packet sizes get equal bytes
    /// (within one quantum).
    #[test]
    fn drr_shares_bytes() {
        let mut q = queue("discipline = \"fq_codel\"\nquantum = 1514");
        let mut dropped = Vec::new();
        for _ in 0..3000 {
            q.enqueue(ms(0), 300, flow(1)).unwrap();
            q.enqueue(ms(0), 1500, flow(2)).unwrap();
        }
        let mut bytes = [0u64; 3];
        // Served at t = 0: sojourn 0, so CoDel never drops.
        for _ in 0..2000 {
            let p = q.dequeue(ms(0), &mut dropped).unwrap();
            bytes[p.item.flow as usize] += p.size;
        }
        assert!(dropped.is_empty());
        let diff = bytes[1].abs_diff(bytes[2]);
        assert!(diff <= 2 * 1514, "{bytes:?}");
    }

    /// §4.1: at the limit, the queue with the most bytes loses its head.
    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut q = queue("discipline = \"fq_codel\"\npackets = 12");
        for i in 0..10 {
            q.enqueue(ms(i), 1000, flow(1)).unwrap();
        }
        q.enqueue(ms(10), 1000, flow(2)).unwrap();
        q.enqueue(ms(11), 1000, flow(2)).unwrap();
        let lost = q.enqueue(ms(12), 1000, flow(2)).unwrap_err();
        assert_eq!(lost.flow, 1, "the fat flow's head, not the arrival");
        assert_eq!(q.len_packets(), 12);
    }

    /// CoDel per queue: a bulk flow's standing queue is marked (ECN default on) while
    /// a sparse flow beside it is neither marked nor delayed.
    #[test]
    fn codel_per_flow() {
        let mut q = queue("discipline = \"fq_codel\"");
        let mut dropped = Vec::new();
        let (mut sparse_max_ms, mut bulk_marks, mut sparse_marks) = (0.0f64, 0, 0);
        // One packet per ms served; bulk keeps 50 queued, sparse sends one per 20 ms.
        for _ in 0..50 {
            q.enqueue(
                ms(0),
                1200,
                Pkt {
                    ecn: Ecn::Ect0,
                    flow: 1,
                },
            )
            .unwrap();
        }
        for t in 0..3000u64 {
            q.enqueue(
                ms(t),
                1200,
                Pkt {
                    ecn: Ecn::Ect0,
                    flow: 1,
                },
            )
            .unwrap();
            // Sparse from 10 ms on (at 0 both flows would be new together).
            if t % 20 == 10 {
                q.enqueue(
                    ms(t),
                    200,
                    Pkt {
                        ecn: Ecn::Ect0,
                        flow: 2,
                    },
                )
                .unwrap();
            }
            if let Some(p) = q.dequeue(ms(t), &mut dropped) {
                let marked = u64::from(p.item.ecn == Ecn::Ce);
                if p.item.flow == 2 {
                    sparse_marks += marked;
                    sparse_max_ms = sparse_max_ms.max((ms(t) - p.enqueued_at).as_secs_f64() * 1e3);
                } else {
                    bulk_marks += marked;
                }
            }
        }
        assert!(bulk_marks > 10, "{bulk_marks}");
        assert_eq!(sparse_marks, 0);
        assert!(sparse_max_ms <= 1.0, "{sparse_max_ms} ms");
        assert!(dropped.is_empty());
    }
}

mod red {
    use super::*;
    use crate::queue::red::{Red, RedConfig};

    fn config() -> RedConfig {
        RedConfig {
            packets: 100,
            min_th: None,
            max_th: None,
            max_p: None,
            w_q: None,
            gentle: None,
            ecn: None,
            packet_time_us: None,
        }
    }

    /// The average follows avg ← (1 − w_q)·avg + w_q·q on every arrival.
    #[test]
    fn average_is_an_ewma() {
        let mut q = queue("discipline = \"red\"\npackets = 100");
        let mut dropped = Vec::new();
        for _ in 0..10 {
            q.enqueue(ms(0), 100, pkt(Ecn::NotEct)).unwrap();
        }
        let a0 = q.red_average().unwrap();
        // The first arrival found an idle (empty) queue; the other nine saw 1..9.
        let want0 = (1..10).fold(0.0, |a, n| 0.998 * a + 0.002 * f64::from(n));
        assert!((a0 - want0).abs() < 1e-12);
        for k in 1..=100 {
            q.enqueue(ms(0), 100, pkt(Ecn::NotEct)).unwrap();
            q.dequeue(ms(0), &mut dropped).unwrap();
            let want = 10.0 + (a0 - 10.0) * 0.998f64.powi(k);
            assert!((q.red_average().unwrap() - want).abs() < 1e-9);
        }
        // An idle second at 120 µs per packet decays it by 0.998^(1e6/120).
        while q.dequeue(ms(1), &mut dropped).is_some() {}
        let before = q.red_average().unwrap();
        q.enqueue(ms(1001), 100, pkt(Ecn::NotEct)).unwrap();
        let want = before * 0.998f64.powf(1e9 / 120e3);
        assert!((q.red_average().unwrap() - want).abs() < 1e-12);
    }

    /// p_b = max_p·(avg − min_th)/(max_th − min_th); above max_th every arrival is
    /// dropped, or with gentle the probability climbs from max_p to 1 by 2·max_th.
    #[test]
    fn base_probability() {
        let mut r: Red<Pkt> = Red::new(&config(), DetRng::new(1)).unwrap();
        for (avg, want) in [
            (2.0, Some(0.0)),
            (5.0, Some(0.0)),
            (10.0, Some(0.05)),
            (15.0, None),
        ] {
            r.set_average(avg);
            assert_eq!(r.p_b(), want, "avg {avg}");
        }
        let mut g: Red<Pkt> = Red::new(
            &RedConfig {
                gentle: Some(true),
                ..config()
            },
            DetRng::new(1),
        )
        .unwrap();
        g.set_average(22.5);
        assert!((g.p_b().unwrap() - (0.1 + 0.9 * 0.5)).abs() < 1e-12);
        g.set_average(30.0);
        assert_eq!(g.p_b(), None);
    }

    /// At a steady average between the thresholds, early marks (ECT, ecn on) come at
    /// the rate of RED's uniform spacing, p_a = p_b/(1 − count·p_b): a mean gap of
    /// about (1/p_b + 1)/2 arrivals; not-ECT is dropped instead; above max_th every
    /// arrival is dropped whatever its codepoint.
    #[test]
    fn early_marks_and_forced_drops() {
        let mut r: Red<Pkt> = Red::new(
            &RedConfig {
                ecn: Some(true),
                w_q: Some(1.0),
                ..config()
            },
            DetRng::new(1),
        )
        .unwrap();
        // w_q = 1: the average is the queue length; hold it at 10 (p_b = 0.05).
        for _ in 0..10 {
            r.enqueue(ms(0), 100, pkt(Ecn::Ect0)).unwrap();
        }
        let (mut marked, n) = (0, 20_000);
        for _ in 0..n {
            let _ = r.enqueue(ms(0), 100, pkt(Ecn::Ect0));
            let p = r.dequeue(ms(0)).unwrap();
            marked += u64::from(p.item.ecn == Ecn::Ce);
        }
        // Uniform spacing: one mark per ~1/(2·p_b)... to 1/p_b arrivals; with
        // p_a = p_b/(1 − count·p_b) the mean gap is about (1/p_b + 1)/2 = 10.5.
        let rate = marked as f64 / n as f64;
        assert!((0.08..=0.11).contains(&rate), "mark rate {rate}");
        assert_eq!(r.stats.drops, 0);
        // Not-ECT at the same average is dropped instead.
        let refused = (0..1000)
            .filter(|_| {
                let out = r.enqueue(ms(0), 100, pkt(Ecn::NotEct)).is_err();
                if !out {
                    r.dequeue(ms(0));
                }
                out
            })
            .count();
        assert!(refused > 50, "{refused}");
        // Above max_th: forced drops of ECT packets too.
        for _ in 0..10 {
            let _ = r.enqueue(ms(0), 100, pkt(Ecn::Ect0));
        }
        let before = r.stats.drops;
        while r.len_packets() < 15 {
            let _ = r.enqueue(ms(0), 100, pkt(Ecn::Ect0));
        }
        assert!(r.enqueue(ms(0), 100, pkt(Ecn::Ect0)).is_err());
        assert!(r.stats.drops > before);
    }
}

/// Same seed, same fates: two queues built alike drop and mark alike. DualPI2 draws
/// no random number at all (every decision is `recur()`'s, RFC 9332 A.1), so even
/// another seed gives the same fates.
#[test]
fn same_seed_same_fates() {
    let run = |seed: u64| {
        let c: QueueConfig = toml::from_str("discipline = \"dualpi2\"").unwrap();
        let mut q: Queue<Pkt> = Queue::new(&c, DetRng::new(seed)).unwrap();
        let mut fates = Vec::new();
        let mut dropped = Vec::new();
        for tick in 0..20_000u64 {
            let t = us(tick * 100);
            if tick % 4 != 0 {
                let _ = q.enqueue(t, 1000, pkt(Ecn::Ect0));
            }
            if tick % 2 == 0 {
                if let Some(p) = q.dequeue(t, &mut dropped) {
                    fates.push(p.item.ecn);
                }
            }
        }
        (fates, dropped.len())
    };
    let (fates, drops) = run(1);
    assert!(
        fates.contains(&Ecn::Ce),
        "the PI marks ECT(0) in the C queue"
    );
    assert!((fates.clone(), drops) == run(1) && (fates, drops) == run(2));
}
