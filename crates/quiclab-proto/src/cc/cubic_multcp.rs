//! mulTCP for CUBIC: one connection that competes like `N` CUBIC flows.
//!
//! Seed 003's QUIC used "a variant of mulTCP for Cubic" so one connection would take the
//! share of the two TCP connections a video player opens. Chromium's CubicBytes does this
//! with a connection count: it keeps CUBIC's cubic term (C, and K from the actual window)
//! and changes only the two AIMD constants, as N flows sharing one loss would:
//!
//! - the multiplicative decrease (RFC 9438 §4.6, β_cubic = 0.7): when one of N flows
//!   backs off by β and the others keep their windows, the aggregate keeps
//!   ((N − 1) + β) / N of its window, so β_N = (N − 1 + β) / N;
//! - the Reno-friendly region (RFC 9438 §4.3): α_cubic = 3 (1 − β) / (1 + β) makes an AIMD
//!   flow with decrease β as fast as Reno; N Reno flows are matched by scaling the
//!   additive increase with N² (RFC 9438 §4.3's derivation: the AIMD throughput grows with
//!   √(α (1 + β) / (1 − β))), so α_N = 3 N² (1 − β_N) / (1 + β_N). After W_est reaches
//!   cwnd_prior the RFC's α = 1 is one Reno flow's increase; N flows add N.
//!
//! Fast convergence (RFC 9438 §4.7) uses β_N too: W_max = cwnd (1 + β_N) / 2, which is
//! Chromium's (N − 1 + 0.85) / N for the default β.
//!
//! With N = 1 every value is bit-for-bit the plain RFC 9438 one: (0 + β) / 1 = β and
//! 3 · 1 · x = 3 x exactly in IEEE arithmetic.

/// How many CUBIC flows one connection emulates (`emulated_flows`, at least 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmulatedFlows {
    n: f64,
}

impl EmulatedFlows {
    /// `n` flows; 0 is treated as 1 (the config validation refuses 0 before this).
    pub fn new(n: u32) -> Self {
        EmulatedFlows {
            n: f64::from(n.max(1)),
        }
    }

    /// β_N = (N − 1 + β) / N: the aggregate's decrease when one of N flows backs off by β.
    pub fn beta(self, beta: f64) -> f64 {
        (self.n - 1.0 + beta) / self.n
    }

    /// α_N = 3 N² (1 − β_N) / (1 + β_N) for the Reno-friendly estimate (RFC 9438 §4.3,
    /// eq. 4, with N Reno flows' rate).
    pub fn alpha_cubic(self, beta: f64) -> f64 {
        let b = self.beta(beta);
        3.0 * self.n * self.n * (1.0 - b) / (1.0 + b)
    }

    /// The Reno-friendly increase once W_est has reached cwnd_prior (RFC 9438 §4.3: 1 for
    /// one flow; N flows add N segments per RTT).
    pub fn alpha_reno(self) -> f64 {
        self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flow_is_rfc_9438_bit_for_bit() {
        let one = EmulatedFlows::new(1);
        for beta in [0.7, 0.5, 0.8, 0.123_456_789] {
            assert_eq!(one.beta(beta).to_bits(), beta.to_bits());
            let plain = 3.0 * (1.0 - beta) / (1.0 + beta);
            assert_eq!(one.alpha_cubic(beta).to_bits(), plain.to_bits());
        }
        assert_eq!(one.alpha_reno(), 1.0);
        assert_eq!(EmulatedFlows::new(0), one);
    }

    #[test]
    fn two_flows_match_chromium_constants() {
        let two = EmulatedFlows::new(2);
        // β_2 = (1 + 0.7) / 2 = 0.85.
        assert!((two.beta(0.7) - 0.85).abs() < 1e-12);
        // α_2 = 3 · 4 · 0.15 / 1.85 = 0.972 97...
        assert!((two.alpha_cubic(0.7) - 1.8 / 1.85).abs() < 1e-12);
        assert_eq!(two.alpha_reno(), 2.0);
        // Fast convergence (1 + β_N) / 2 = Chromium's (N − 1 + 0.85) / N = 0.925.
        assert!(((1.0 + two.beta(0.7)) / 2.0 - 0.925).abs() < 1e-12);
    }

    #[test]
    fn more_flows_back_off_less_and_grow_faster() {
        let mut last = (0.7, 3.0 * 0.3 / 1.7);
        for n in 2..=8 {
            let f = EmulatedFlows::new(n);
            let (b, a) = (f.beta(0.7), f.alpha_cubic(0.7));
            // β_N = 1 − 0.3 / N.
            assert!((b - (1.0 - 0.3 / f64::from(n))).abs() < 1e-12, "n {n}");
            assert!(b > last.0 && a > last.1, "n {n}: β {b}, α {a}");
            last = (b, a);
        }
    }

    /// RFC 9438 §4.3's AIMD model: average window ∝ √(α (1 + β) / (2 (1 − β))) per flow.
    /// N emulated flows should average N times what one AIMD(α_1, β) flow averages, as
    /// N independent flows would.
    #[test]
    fn aimd_throughput_scales_with_n() {
        let rate = |alpha: f64, beta: f64| (alpha * (1.0 + beta) / (2.0 * (1.0 - beta))).sqrt();
        let one = EmulatedFlows::new(1);
        let base = rate(one.alpha_cubic(0.7), 0.7);
        for n in 1..=6 {
            let f = EmulatedFlows::new(n);
            let r = rate(f.alpha_cubic(0.7), f.beta(0.7));
            assert!(
                (r / base - f64::from(n)).abs() < 1e-9,
                "n {n}: {}",
                r / base
            );
        }
    }
}
