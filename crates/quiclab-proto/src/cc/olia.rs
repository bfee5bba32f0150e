//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! "MPTCP is not Pareto-optimal: performance issues and a possible solution", IEEE/ACM
//! ToN 2013; draft-khalili-mptcp-congestion-control-05 §3): a coupled congestion
//! avoidance increase that, unlike LIA, moves traffic towards the best paths while
//! keeping LIA's fairness to single-path flows.
//!
//! The formula, as the authors' implementation in the UCLouvain Multipath TCP kernel
//! computes it (`net/mptcp/mptcp_olia.c`; the draft's text could not be retrieved): for
//! each ACK on path r, in packets,
//!
//! ```text
//! w_r += (w_r / rtt_r²) / (Σ_p w_p / rtt_p)² + α_r / w_r
//! ```
//!
//! over the active paths R. l_p = max(bytes acknowledged between the last two losses
//! on p, bytes acknowledged since the last loss on p); the best paths B maximise
//! l_p / rtt_p² (Reno's rate on p grows with √l_p / rtt_p); M are the paths with the
//! largest window, in whole packets of `mss` bytes as the reference implementation
//! counts windows (in bytes, two equal paths would almost never tie, and the path a few
//! bytes ahead would lose α on its ACKs while the other, already behind by the time
//! its own ACKs arrive, would not gain it). With B \ M non-empty, α_r = 1 / (|R| · |B \ M|) on B \ M, −1 / (|R| ·
//! |M|) on M, 0 elsewhere; otherwise α = 0 everywhere. Σ α_r = 0: OLIA moves window
//! from the largest paths to the best ones without growing the total faster than LIA.
//!
//! A leaf of `cc/`: the formula and the per-path inter-loss counter. The connection
//! (`connection/multipath_coupling.rs`) reads every active path's window, smoothed RTT
//! and l_p before an ACK on a path and hands that path's [`OliaIncrease`] to its NewReno.

use std::time::Duration;

/// One active path's state, as OLIA reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OliaPath {
    /// w_p in bytes.
    pub cwnd: u64,
    /// rtt_p: the path's smoothed RTT (RFC 9002 §5.3).
    pub srtt: Duration,
    /// l_p in bytes ([`InterLoss::bytes`]).
    pub inter_loss: u64,
}

/// OLIA's increase on one path for one ACK: the window grows by `mss * bytes_acked *
/// factor` bytes (negative: it shrinks). Call contract: `factor` is in 1/bytes; with one
/// path it is 1/cwnd, Reno's increase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OliaIncrease {
    /// (w_r / rtt_r²) / (Σ_p w_p / rtt_p)² + α_r / w_r, windows in bytes.
    pub factor: f64,
    /// α_r (for tests and logs).
    pub alpha: f64,
}

impl OliaIncrease {
    /// The change in bytes of an ACK of `bytes_acked` with maximum datagram size `mss`,
    /// unrounded.
    pub fn increase(&self, bytes_acked: u64, mss: u64) -> f64 {
        bytes_acked as f64 * mss as f64 * self.factor
    }
}

/// OLIA's increase for path `index` of `paths` (every active path, the ACKed one
/// included), windows counted in packets of `mss` bytes for the set M. `None` when that
/// path or the sum has no window; a zero RTT counts as 1 µs (the time unit cancels out
/// of both terms).
pub fn olia_increase(paths: &[OliaPath], index: usize, mss: u64) -> Option<OliaIncrease> {
    let me = paths.get(index)?;
    if me.cwnd == 0 {
        return None;
    }
    let secs = |p: &OliaPath| p.srtt.as_secs_f64().max(1e-6);
    let sum: f64 = paths.iter().map(|p| p.cwnd as f64 / secs(p)).sum();
    let first = me.cwnd as f64 / (secs(me) * secs(me)) / (sum * sum);
    let alpha = alpha(paths, index, mss.max(1));
    let factor = first + alpha / me.cwnd as f64;
    factor.is_finite().then_some(OliaIncrease { factor, alpha })
}

/// α_r of path `index` (module doc). Ties are exact: l_p / rtt_p² is compared by
/// cross-multiplication in integers (RTTs in µs), as the reference implementation does.
fn alpha(paths: &[OliaPath], index: usize, mss: u64) -> f64 {
    let us = |p: &OliaPath| p.srtt.as_micros().max(1);
    // p is better than q if l_p / rtt_p² > l_q / rtt_q².
    let cmp = |p: &OliaPath, q: &OliaPath| {
        let a = u128::from(p.inter_loss).saturating_mul(us(q).saturating_mul(us(q)));
        let b = u128::from(q.inter_loss).saturating_mul(us(p).saturating_mul(us(p)));
        a.cmp(&b)
    };
    let Some(best) = paths.iter().max_by(|p, q| cmp(p, q)) else {
        return 0.0;
    };
    let max_w = paths.iter().map(|p| p.cwnd / mss).max().unwrap_or(0);
    let in_m = |p: &OliaPath| p.cwnd / mss == max_w;
    let in_collected = |p: &OliaPath| !in_m(p) && cmp(p, best).is_eq();
    let m = paths.iter().filter(|p| in_m(p)).count();
    let collected = paths.iter().filter(|p| in_collected(p)).count();
    let n = paths.len();
    let me = &paths[index];
    if collected == 0 {
        0.0
    } else if in_collected(me) {
        1.0 / (n * collected) as f64
    } else if in_m(me) {
        -1.0 / (n * m) as f64
    } else {
        0.0
    }
}

/// A path's l_p: bytes acknowledged since its last congestion event, and between the
/// last two. Two counters per path: bounded whatever the peer sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InterLoss {
    /// Bytes acknowledged between the last two congestion events.
    previous: u64,
    /// Bytes acknowledged since the last one.
    current: u64,
}

impl InterLoss {
    /// `bytes` newly acknowledged.
    pub fn on_acked(&mut self, bytes: u64) {
        self.current = self.current.saturating_add(bytes);
    }

    /// A congestion event (a new recovery period). As the reference implementation, an
    /// event with nothing acknowledged since the last one keeps the counters.
    pub fn on_congestion_event(&mut self) {
        if self.current > 0 {
            self.previous = self.current;
            self.current = 0;
        }
    }

    /// l_p = max(previous, current).
    pub fn bytes(&self) -> u64 {
        self.previous.max(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(cwnd: u64, rtt_ms: u64, inter_loss: u64) -> OliaPath {
        OliaPath {
            cwnd,
            srtt: Duration::from_millis(rtt_ms),
            inter_loss,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-12)
    }

    #[test]
    fn one_path_is_reno() {
        let i = olia_increase(&[path(30_000, 40, 5_000)], 0, 1200).unwrap();
        assert_eq!(i.alpha, 0.0);
        assert!(close(i.factor, 1.0 / 30_000.0), "{i:?}");
        // mss * b / cwnd = 1200 * 1200 / 30 000 = 48 bytes.
        assert!(close(i.increase(1200, 1200), 48.0));
    }

    #[test]
    fn two_equal_paths_grow_a_quarter_each() {
        // Equal windows and l/rtt²: M = B = both paths, B \ M empty, alpha = 0;
        // factor = (w/r²) / (2w/r)² = 1 / 4w: half a Reno flow's growth in total, as LIA.
        let p = [path(24_000, 20, 50_000), path(24_000, 20, 50_000)];
        for k in 0..2 {
            let i = olia_increase(&p, k, 1200).unwrap();
            assert_eq!(i.alpha, 0.0);
            assert!(close(i.factor, 1.0 / 96_000.0), "{i:?}");
        }
    }

    #[test]
    fn a_better_smaller_path_takes_window_from_the_largest() {
        // A: 40 000 B, 10 ms, l = 50 000 (l/rtt² = 500); B: 20 000 B, 10 ms, l = 100 000
        // (1000). Best = {B}, M = {A}, B \ M = {B}: alpha_B = 1/(2*1), alpha_A = -1/(2*1).
        // Σ w/rtt = 4000 + 2000 = 6000 (ms; units cancel), squared 36e6.
        let p = [path(40_000, 10, 50_000), path(20_000, 10, 100_000)];
        let a = olia_increase(&p, 0, 1200).unwrap();
        let b = olia_increase(&p, 1, 1200).unwrap();
        assert_eq!((a.alpha, b.alpha), (-0.5, 0.5));
        // A: 400 / 36e6 - 0.5 / 40 000 = 1.1111e-5 - 1.25e-5 = -1.3889e-6 (shrinks).
        assert!(close(a.factor, 400.0 / 36e6 - 0.5 / 40_000.0), "{a:?}");
        assert!(a.factor < 0.0);
        // B: 200 / 36e6 + 0.5 / 20 000 = 5.5556e-6 + 2.5e-5 = 3.0556e-5.
        assert!(close(b.factor, 200.0 / 36e6 + 0.5 / 20_000.0), "{b:?}");
    }

    #[test]
    fn the_largest_path_being_best_gives_no_alpha() {
        // A: 40 000 B, 10 ms, l = 100 000 (1000); B: 20 000 B, 40 ms, l = 400 000 (250).
        // Best = {A} = M: B \ M empty, alpha = 0 on both.
        let p = [path(40_000, 10, 100_000), path(20_000, 40, 400_000)];
        for k in 0..2 {
            assert_eq!(olia_increase(&p, k, 1200).unwrap().alpha, 0.0);
        }
        // Σ w/rtt = 4000 + 500 = 4500; B: (20 000/1600) / 4500² = 12.5 / 20.25e6.
        let b = olia_increase(&p, 1, 1200).unwrap();
        assert!(close(b.factor, 12.5 / 20.25e6), "{b:?}");
    }

    #[test]
    fn three_paths_split_alpha_over_the_sets() {
        // M = {A} (60 000); best l/rtt² = 1000 on B and C (both below A's window):
        // alpha_B = alpha_C = 1/(3*2), alpha_A = -1/(3*1).
        let p = [
            path(60_000, 10, 10_000),
            path(20_000, 10, 100_000),
            path(30_000, 20, 400_000),
        ];
        let al: Vec<f64> = (0..3)
            .map(|k| olia_increase(&p, k, 1200).unwrap().alpha)
            .collect();
        assert!(close(al[0], -1.0 / 3.0) && close(al[1], 1.0 / 6.0) && close(al[2], 1.0 / 6.0));
        assert!(al.iter().sum::<f64>().abs() < 1e-12);
    }

    #[test]
    fn inter_loss_keeps_the_larger_of_the_last_two_intervals() {
        let mut l = InterLoss::default();
        l.on_acked(1000);
        assert_eq!(l.bytes(), 1000);
        l.on_congestion_event();
        l.on_congestion_event(); // nothing acked since: kept
        assert_eq!(l.bytes(), 1000);
        l.on_acked(300);
        assert_eq!(l.bytes(), 1000);
        l.on_acked(900);
        assert_eq!(l.bytes(), 1200);
        l.on_congestion_event();
        l.on_acked(10);
        assert_eq!(l.bytes(), 1200);
        l.on_acked(u64::MAX);
        assert_eq!(l.bytes(), u64::MAX);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(olia_increase(&[], 0, 1200), None);
        assert_eq!(olia_increase(&[path(0, 10, 0)], 0, 1200), None);
        let i = olia_increase(&[path(1_000, 0, 0), path(1_000, 10, 0)], 0, 1200).unwrap();
        assert!(i.factor.is_finite());
    }
}
