//! What DualPI2 applied, measured inside the measurement window: per queue, the mean
//! of the base probability p' (and of p'²) at the packets it decided on, the mean
//! coupled and native likelihoods it handed to `recur()`, and whose likelihood each
//! congestion signal came from; for the whole AQM, the time average of p' and p'² over
//! its PI updates.
//!
//! Why: RFC 9332 §2.1's steady-state relation p_C = (p_CL / k)² assumes p' holds
//! still. The C queue's drop probability is the mean of p'² over C packets, the L
//! queue's coupled mark probability k times the mean of p' over L packets, so when p'
//! moves the measured ratio p_C / (p_L / k)² is E_C[p'²] / E_L[p']², not 1 (Jensen's
//! inequality). These counters measure that gap instead of inferring it.

use serde::Serialize;

/// Everything measured in the window: the L and C queues' sums and p' over time.
#[derive(Clone, Debug, Default)]
pub(super) struct WindowApplied {
    pub l: Applied,
    pub c: Applied,
    pub pi: PiAverage,
}

/// Per-queue sums over the AQM's decisions in the window.
#[derive(Clone, Debug, Default)]
pub(super) struct Applied {
    decisions: u64,
    sum_p_prime: f64,
    sum_p_prime_sq: f64,
    sum_coupled: f64,
    sum_native: f64,
    sum_applied: f64,
    native_signals: u64,
    coupled_signals: u64,
}

/// One decision: p' at the time, the coupled likelihood (L: p_CL = min(k·p', 1); C:
/// p_C = p'²), the native one (L: the ramp, RFC 9332 A.1 `laqm()`; C: 0), and whether
/// `recur()` fired (a CE mark or an AQM drop).
#[derive(Clone, Copy, Debug)]
pub(super) struct Decision {
    pub p_prime: f64,
    pub coupled: f64,
    pub native: f64,
    pub signalled: bool,
}

impl Applied {
    /// Adds one decision. A signal is the ramp's when the ramp's likelihood was the
    /// larger one (RFC 9332 A.1: p_L = max(p'_L, p_CL)), else the coupling's.
    pub(super) fn record(&mut self, d: Decision) {
        self.decisions = self.decisions.saturating_add(1);
        self.sum_p_prime += d.p_prime;
        self.sum_p_prime_sq += d.p_prime * d.p_prime;
        self.sum_coupled += d.coupled;
        self.sum_native += d.native;
        self.sum_applied += d.native.max(d.coupled);
        if d.signalled {
            if d.native > d.coupled {
                self.native_signals = self.native_signals.saturating_add(1);
            } else {
                self.coupled_signals = self.coupled_signals.saturating_add(1);
            }
        }
    }

    pub(super) fn report(&self) -> AppliedReport {
        let mean = |sum: f64| (self.decisions > 0).then(|| sum / self.decisions as f64);
        AppliedReport {
            decisions: self.decisions,
            p_prime_mean: mean(self.sum_p_prime),
            p_prime_sq_mean: mean(self.sum_p_prime_sq),
            p_coupled_mean: mean(self.sum_coupled),
            p_native_mean: mean(self.sum_native),
            p_applied_mean: mean(self.sum_applied),
            native_signals: self.native_signals,
            coupled_signals: self.coupled_signals,
        }
    }
}

/// What DualPI2 applied to one queue's packets in the measurement window (results'
/// `links[i].subqueues[j].applied`; DualPI2 only).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AppliedReport {
    /// Packets the AQM decided on: those sent plus those it dropped (not tail drops).
    pub decisions: u64,
    /// Mean p' at those decisions (`None`: none).
    pub p_prime_mean: Option<f64>,
    /// Mean p'² at those decisions: the C queue's E_C[p'²].
    pub p_prime_sq_mean: Option<f64>,
    /// Mean coupled likelihood: p_CL = min(k·p', 1) in L, p_C = p'² in C.
    pub p_coupled_mean: Option<f64>,
    /// Mean native likelihood: the L queue's ramp (0 in C).
    pub p_native_mean: Option<f64>,
    /// Mean likelihood handed to `recur()`: max(ramp, p_CL) in L, p_C in C.
    pub p_applied_mean: Option<f64>,
    /// Congestion signals (CE marks and AQM drops) whose likelihood was the ramp's.
    pub native_signals: u64,
    /// Congestion signals whose likelihood was the coupled one.
    pub coupled_signals: u64,
}

/// Time average of p' over the PI updates in the window.
#[derive(Clone, Debug, Default)]
pub(super) struct PiAverage {
    updates: u64,
    sum_p_prime: f64,
    sum_p_prime_sq: f64,
}

impl PiAverage {
    /// Counts `n` updates that each left p' at `p_prime` (p' holds until the next one,
    /// so the mean over updates is the mean over time).
    pub(super) fn record(&mut self, p_prime: f64, n: u64) {
        self.updates = self.updates.saturating_add(n);
        self.sum_p_prime += p_prime * n as f64;
        self.sum_p_prime_sq += p_prime * p_prime * n as f64;
    }

    pub(super) fn report(&self) -> DualPi2Report {
        let mean = |sum: f64| (self.updates > 0).then(|| sum / self.updates as f64);
        DualPi2Report {
            pi_updates: self.updates,
            p_prime_time_mean: mean(self.sum_p_prime),
            p_prime_sq_time_mean: mean(self.sum_p_prime_sq),
        }
    }
}

/// DualPI2 as a whole over the measurement window (results' `links[i].dualpi2`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DualPi2Report {
    /// PI updates (RFC 9332 A.1 every `Tupdate`) in the window.
    pub pi_updates: u64,
    /// Time average of p' over them (`None`: none).
    pub p_prime_time_mean: Option<f64>,
    /// Time average of p'².
    pub p_prime_sq_time_mean: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(p_prime: f64, coupled: f64, native: f64, signalled: bool) -> Decision {
        Decision {
            p_prime,
            coupled,
            native,
            signalled,
        }
    }

    #[test]
    fn means_and_attribution() {
        let mut a = Applied::default();
        assert_eq!(a.report().p_prime_mean, None);
        a.record(d(0.1, 0.2, 0.0, true));
        a.record(d(0.3, 0.6, 0.9, true));
        a.record(d(0.2, 0.4, 0.1, false));
        let r = a.report();
        assert_eq!(r.decisions, 3);
        let close = |x: Option<f64>, y: f64| (x.unwrap() - y).abs() < 1e-12;
        assert!(close(r.p_prime_mean, 0.2));
        assert!(close(r.p_prime_sq_mean, (0.01 + 0.09 + 0.04) / 3.0));
        assert!(close(r.p_coupled_mean, 0.4));
        assert!(close(r.p_native_mean, 1.0 / 3.0));
        assert!(close(r.p_applied_mean, (0.2 + 0.9 + 0.4) / 3.0));
        assert_eq!((r.native_signals, r.coupled_signals), (1, 1));
    }

    /// p' = 0 for 3 updates, 0.2 for 1: mean 0.05, mean square 0.01, so
    /// E[p'²] / E[p']² = 4 (= 1 + CV², CV = √3).
    #[test]
    fn time_average_counts_repeated_updates() {
        let mut p = PiAverage::default();
        assert_eq!(p.report().p_prime_time_mean, None);
        p.record(0.0, 3);
        p.record(0.2, 1);
        let r = p.report();
        assert_eq!(r.pi_updates, 4);
        let (m, s) = (
            r.p_prime_time_mean.unwrap(),
            r.p_prime_sq_time_mean.unwrap(),
        );
        assert!((m - 0.05).abs() < 1e-12 && (s - 0.01).abs() < 1e-12);
        assert!((s / (m * m) - 4.0).abs() < 1e-9);
    }
}
