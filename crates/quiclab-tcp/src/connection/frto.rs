//! F-RTO (RFC 5682 §3, the SACK-enhanced algorithm, as Linux runs it with
//! tcp_frto = 2; `[flows.tcp] frto = true`): after a retransmission timeout, find out
//! from the next ACKs whether it was spurious (a delay spike, not a loss) and if so
//! undo it. The timeout is handled as always (the head is retransmitted, the window
//! collapses, the segments RACK takes for lost on a timeout are, RFC 8985 §6.3); then
//! - step 2: the first ACK that advances SND.UNA lets two new segments out instead of
//!   more retransmissions (RFC 5682 §3, 2b); a duplicate ACK, or nothing new to send,
//!   ends F-RTO: the conventional recovery goes on;
//! - step 3: an ACK that acknowledges or SACKs data never retransmitted shows that the
//!   original transmissions arrived: the timeout was spurious. The segments declared
//!   lost are in flight again and the window and ssthresh of before the timeout come
//!   back (Linux's undo, tcp_try_undo_loss; RFC 4015's Eifel response restores them
//!   likewise). Any other ACK ends F-RTO.

use super::TcpConnection;
use crate::scoreboard::Delivered;

/// F-RTO's state between a timeout and its verdict.
#[derive(Clone, Debug)]
pub(super) struct Frto {
    /// Step 2 passed: new segments were let out.
    new_data_sent: bool,
    /// New segments step 2 may still send.
    pub(super) new_segments: u32,
    /// The controller's window and ssthresh before the timeout.
    prior_cwnd: u64,
    prior_ssthresh: u64,
}

impl Frto {
    /// Step 2's new segments are out: the next ACK decides.
    pub(super) fn waiting(&self) -> bool {
        self.new_data_sent && self.new_segments == 0
    }
}

impl TcpConnection {
    /// Before a timeout's response: whether F-RTO runs on it (not within a fast
    /// recovery or after a timeout not yet resolved, as Linux), with the window to
    /// restore.
    pub(super) fn frto_before_rto(&self) -> Option<Frto> {
        let applies = self.config.frto && self.sack && self.recovery_point.is_none();
        applies.then(|| Frto {
            new_data_sent: false,
            new_segments: 0,
            prior_cwnd: self.cc.window(),
            prior_ssthresh: self.cc.ssthresh(),
        })
    }

    /// RFC 5682 §3 steps 2 and 3 on an ACK after a timeout (`delivered`: what it newly
    /// acknowledged or SACKed; `advanced`: SND.UNA moved).
    pub(super) fn frto_on_ack(&mut self, delivered: &[Delivered], advanced: bool) {
        let Some(f) = self.frto.as_mut() else {
            return;
        };
        let original = delivered
            .iter()
            .any(|d| !d.seg.retransmitted && d.seg.end > d.start);
        if original {
            let (cwnd, ssthresh) = (f.prior_cwnd, f.prior_ssthresh);
            self.frto = None;
            self.undo_rto(cwnd, ssthresh);
            return;
        }
        if !f.new_data_sent && advanced && self.sb.unsent() > 0 {
            // Step 2b: two new segments rather than retransmissions.
            f.new_data_sent = true;
            f.new_segments = 2;
        } else {
            // Step 2a / 3b: a duplicate ACK, nothing new to send, or no evidence.
            self.frto = None;
        }
    }

    /// The timeout was spurious: what it declared lost is in flight again, and the
    /// window is what it was (or more, if it grew since).
    fn undo_rto(&mut self, cwnd: u64, ssthresh: u64) {
        self.sb.undo_lost();
        self.recovery_point = None;
        let cwnd = cwnd.max(self.cc.window());
        let ssthresh = (ssthresh != u64::MAX).then_some(ssthresh);
        self.cc.set_window(cwnd, ssthresh);
        self.stats.spurious_rtos += 1;
    }
}
