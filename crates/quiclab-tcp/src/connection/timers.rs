//! Timers: the retransmission timer (RFC 6298), the tail loss probe (RFC 8985 §7),
//! the RACK reordering timer (RFC 8985 §6.3), delayed ACKs and pacing.

use super::{CloseReason, State, TcpConnection, SYN_RETRIES};
use crate::linux_rto::RtoAlgorithm;
use quiclab_proto::{Instant, GRANULARITY};
use std::time::Duration;

/// RFC 6298 §2.5: an upper bound on the RTO (60 s; Linux uses 120 s).
const MAX_RTO: Duration = Duration::from_secs(60);

impl TcpConnection {
    /// RFC 6298 §2: RTO = SRTT + max(G, 4 RTTVAR), at least the minimum, backed off;
    /// with `rto = "linux"`, SRTT + Linux's variance term (`linux_rto.rs`).
    pub fn rto(&self) -> Duration {
        let base = if self.rtt.has_sample() {
            match self.config.rto {
                RtoAlgorithm::Rfc6298 => {
                    let v = (self.rtt.rttvar() * 4).max(GRANULARITY);
                    (self.rtt.smoothed() + v).max(super::secs_ms(self.config.min_rto_ms))
                }
                RtoAlgorithm::Linux => self.rtt.smoothed() + self.linux_rttvar.rttvar(),
            }
        } else {
            super::secs_ms(self.config.initial_rto_ms)
        };
        base.saturating_mul(1u32 << self.rto_backoff.min(16))
            .min(MAX_RTO)
    }

    /// One RTT sample (RFC 6298 §3, Karn's rule applied by the caller): the smoothed
    /// estimate, and Linux's variance, which reads SRTT before the update.
    pub(super) fn rtt_sample(&mut self, sample: Duration) {
        if self.config.rto == RtoAlgorithm::Linux {
            let min = super::secs_ms(self.config.min_rto_ms);
            let (una, nxt) = (self.sb.una, self.sb.nxt);
            self.linux_rttvar
                .on_sample(self.rtt.smoothed(), sample, una, nxt, min);
        }
        self.rtt
            .update(sample, Duration::ZERO, true, Duration::ZERO);
    }

    /// RFC 6298 §5.1/5.3: the timer runs while data is outstanding.
    pub(super) fn rearm_rto(&mut self, now: Instant) {
        let outstanding = !self.sb.segs.is_empty();
        self.rto_deadline = outstanding.then(|| now + self.rto());
        if !outstanding {
            self.tlp_deadline = None;
        }
    }

    /// RFC 8985 §7.2: arm the probe timeout when not in recovery and no probe is out.
    pub(super) fn arm_tlp(&mut self, now: Instant) {
        self.tlp_deadline = None;
        if !self.sack
            || self.tlp_out
            || self.recovery_point.is_some()
            || self.sb.segs.is_empty()
            || !self.rtt.has_sample()
        {
            return;
        }
        let mut pto = self.rtt.smoothed() * 2;
        if self.sb.pipe <= self.smss {
            // One segment in flight: the peer may delay its ACK (WCDelAckT).
            pto += super::secs_ms(self.config.delayed_ack_ms);
        }
        let at = now + pto;
        self.tlp_deadline = Some(self.rto_deadline.map_or(at, |r| at.min(r)));
    }

    /// The earliest time [`handle_timeout`](Self::handle_timeout) must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Closed {
            return None;
        }
        [
            self.rto_deadline,
            self.tlp_deadline,
            self.reorder_deadline,
            self.pacing_deadline,
            self.rx.ack_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires every timer whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.pacing_deadline.is_some_and(|t| t <= now) {
            self.pacing_deadline = None;
        }
        if self.reorder_deadline.is_some_and(|t| t <= now) {
            self.reorder_deadline = None;
            let losses = self.find_losses(now);
            self.inform_controller(now, &[], &losses, None);
            self.prr_on_ack(0, false);
        }
        if self.tlp_deadline.is_some_and(|t| t <= now) {
            // RFC 8985 §7.3: send one probe segment.
            self.tlp_deadline = None;
            self.tlp_pending = true;
            self.tlp_out = true;
            self.stats.tlp_count += 1;
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
    }

    fn on_rto(&mut self, now: Instant) {
        self.rto_deadline = None;
        self.rto_backoff += 1;
        if matches!(self.state, State::SynSent | State::SynReceived) {
            // RFC 6298 §5.7 / RFC 9293 §3.8.1: retransmit the SYN, back off.
            if self.syn_count > SYN_RETRIES {
                self.close_with(CloseReason::HandshakeTimeout);
            } else {
                self.syn_pending = true;
            }
            return;
        }
        self.stats.rto_count += 1;
        // RFC 6298 §5.4-5.6: the first segment is lost and sent again at once; with
        // SACK, RACK decides which others are (RFC 8985 §6.3), without it everything
        // unSACKed is (RFC 6675 §5.1). The window collapses (the controller's
        // persistent-congestion response).
        let frto = self.frto_before_rto();
        let lost = if self.sack {
            let reo = self.reo_wnd();
            self.sb.mark_lost_on_rto(now, reo)
        } else {
            self.sb.mark_all_lost()
        };
        self.rto_retransmit = true;
        self.recovery_point = None;
        let losses = self.declare_lost(&lost, true);
        self.inform_controller(now, &[], &losses, None);
        // PRR is for fast recovery; after a timeout the controller's window rules.
        self.prr = None;
        self.frto = frto;
        self.tlp_deadline = None;
        self.tlp_pending = false;
        self.tlp_out = false;
        self.reorder_deadline = None;
        // Re-armed when the first retransmission leaves.
        self.rto_deadline = None;
    }
}
