//! LIA, the Linked Increases Algorithm (RFC 6356): the coupled congestion avoidance
//! increase of a multipath connection, so that it takes no more capacity than a
//! single-path flow on its best path (RFC 6356 §2 goals 1-3).
//!
//! A leaf of `cc/`: the formula only. The connection (`connection/multipath_coupling.rs`)
//! reads every active path's window and smoothed RTT before an ACK is processed on a
//! path, makes a [`LiaCoupling`] with [`coupling`], and hands it to that path's controller
//! ([`super::CongestionController::set_coupling`], as [`super::Coupling::Lia`]). NewReno is the only controller that
//! applies it: RFC 6356 §3 defines LIA on Reno's increase; slow start and the halving
//! on loss stay per path, as Reno's (RFC 6356 changes only the increase).

use std::time::Duration;

/// One active path's congestion state, as LIA reads it (RFC 6356 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoupledPath {
    /// cwnd_i in bytes.
    pub cwnd: u64,
    /// rtt_i: the path's smoothed RTT (RFC 9002 §5.3).
    pub srtt: Duration,
}

/// The coupling of one ACK's increase (RFC 6356 §3): `alpha` and `cwnd_total`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiaCoupling {
    /// alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2; 1 with
    /// one path, 1/n with n equal paths.
    pub alpha: f64,
    /// cwnd_total = sum_i cwnd_i, in bytes.
    pub total_window: u64,
}

/// RFC 6356 §3's alpha over `paths` (every active path, the ACKed one included).
/// `None` without a path with a window; a zero RTT counts as 1 µs (alpha is a ratio:
/// the time unit cancels out).
pub fn coupling(paths: &[CoupledPath]) -> Option<LiaCoupling> {
    let total_window = paths.iter().map(|p| p.cwnd).fold(0u64, u64::saturating_add);
    if total_window == 0 {
        return None;
    }
    let secs = |p: &CoupledPath| p.srtt.as_secs_f64().max(1e-6);
    let best = paths
        .iter()
        .map(|p| p.cwnd as f64 / (secs(p) * secs(p)))
        .fold(0.0, f64::max);
    let sum: f64 = paths.iter().map(|p| p.cwnd as f64 / secs(p)).sum();
    let alpha = total_window as f64 * best / (sum * sum);
    alpha.is_finite().then_some(LiaCoupling {
        alpha,
        total_window,
    })
}

impl LiaCoupling {
    /// The window that a Reno increase of `mds * bytes_acked / w` must divide by to give
    /// RFC 6356 §3's min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i /
    /// cwnd_i): w = max(cwnd_total / alpha, cwnd_i), rounded up. The second term of the
    /// min keeps a path's increase at most a Reno flow's on that path.
    pub fn increase_divisor(&self, cwnd: u64) -> u64 {
        let coupled = if self.alpha > 0.0 {
            (self.total_window as f64 / self.alpha).ceil()
        } else {
            f64::MAX
        };
        // Saturating `as`: an alpha near 0 gives u64::MAX (no increase).
        (coupled as u64).max(cwnd).max(1)
    }

    /// RFC 6356 §3's increase in bytes of one ACK of `bytes_acked` on a path of window
    /// `cwnd` and maximum datagram size `mss`, unrounded (for tests and logs).
    pub fn increase(&self, bytes_acked: u64, mss: u64, cwnd: u64) -> f64 {
        let b = bytes_acked as f64 * mss as f64;
        (self.alpha * b / self.total_window as f64).min(b / cwnd.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(cwnd: u64, rtt_ms: u64) -> CoupledPath {
        CoupledPath {
            cwnd,
            srtt: Duration::from_millis(rtt_ms),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn one_path_is_reno() {
        let c = coupling(&[path(30_000, 40)]).unwrap();
        assert!(close(c.alpha, 1.0), "{c:?}");
        assert_eq!(c.increase_divisor(30_000), 30_000);
        assert!(close(c.increase(1200, 1200, 30_000), 48.0));
    }

    #[test]
    fn two_equal_paths_give_alpha_one_half() {
        // alpha = 2w * (w/r^2) / (2w/r)^2 = 1/2; increase = 0.5 * b * mss / 2w = b*mss/4w.
        let c = coupling(&[path(24_000, 20), path(24_000, 20)]).unwrap();
        assert!(close(c.alpha, 0.5), "{c:?}");
        assert_eq!(c.total_window, 48_000);
        assert_eq!(c.increase_divisor(24_000), 96_000);
        assert!(close(c.increase(1200, 1200, 24_000), 15.0));
        // n equal paths: 1/n.
        let c = coupling(&[path(10_000, 50); 4]).unwrap();
        assert!(close(c.alpha, 0.25), "{c:?}");
    }

    #[test]
    fn heterogeneous_paths_match_the_hand_computed_alpha() {
        // Path A: 40 000 B / 10 ms; path B: 20 000 B / 40 ms (rtt in ms, units cancel).
        // max(cwnd/rtt^2) = max(400, 12.5) = 400; sum cwnd/rtt = 4000 + 500 = 4500;
        // alpha = 60 000 * 400 / 4500^2 = 24e6 / 20.25e6 = 1.185185...
        let c = coupling(&[path(40_000, 10), path(20_000, 40)]).unwrap();
        assert!(close(c.alpha, 24.0 / 20.25), "{c:?}");
        // On B: min(alpha*b*mss/60 000, b*mss/20 000) = b*mss * min(1.975e-5, 5e-5).
        let b = 1200.0 * 1200.0;
        assert!(close(
            c.increase(1200, 1200, 20_000),
            b * c.alpha / 60_000.0
        ));
        // divisor = ceil(60 000 / 1.185185) = ceil(50 625) = 50 625.
        assert_eq!(c.increase_divisor(20_000), 50_625);
        assert_eq!(c.increase_divisor(40_000), 50_625);
    }

    /// RFC 6356 §3: per RTT the paths' summed increase (each acknowledges its whole
    /// window once) is at most what a Reno flow with the best path's RTT and the
    /// multipath flow's total window would gain in the same time: one MSS per best RTT.
    #[test]
    fn total_increase_is_no_more_than_a_reno_flow_on_the_best_path() {
        let mss = 1200u64;
        let cases: [&[CoupledPath]; 4] = [
            &[path(24_000, 20), path(24_000, 20)],
            &[path(40_000, 10), path(20_000, 40)],
            &[path(12_000, 100), path(90_000, 30), path(30_000, 30)],
            &[path(2_400, 5), path(600_000, 200)],
        ];
        for paths in cases {
            let c = coupling(paths).unwrap();
            let best_rtt = paths
                .iter()
                .map(|p| p.srtt.as_secs_f64())
                .fold(f64::MAX, f64::min);
            // Increase rate in bytes per second: each path acknowledges cwnd_i per rtt_i.
            let rate: f64 = paths
                .iter()
                .map(|p| c.increase(p.cwnd, mss, p.cwnd) / p.srtt.as_secs_f64())
                .sum();
            let reno = mss as f64 / best_rtt;
            assert!(rate <= reno * (1.0 + 1e-9), "{paths:?}: {rate} > {reno}");
        }
    }

    #[test]
    fn degenerate_inputs_are_no_coupling() {
        assert_eq!(coupling(&[]), None);
        assert_eq!(coupling(&[path(0, 10)]), None);
        let c = coupling(&[path(1_000, 0), path(1_000, 10)]).unwrap();
        assert!(c.alpha.is_finite() && c.alpha > 0.0);
        let zero = LiaCoupling {
            alpha: 0.0,
            total_window: 10,
        };
        assert_eq!(zero.increase_divisor(5), u64::MAX);
    }
}
