//! Proportional Rate Reduction (RFC 6937, as updated by RFC 9937, the published
//! draft-ietf-tcpm-prr-rfc6937bis that Linux follows; `[flows.tcp] recovery = "prr"`):
//! during fast recovery the window is set on every ACK so that the data sent follows
//! the data delivered, in proportion ssthresh / RecoverFS while the flight is above
//! ssthresh, and no faster than the deliveries (plus one segment on an ACK that shows
//! progress) once below it. So neither a burst when many segments are declared lost
//! at once nor a silent half round trip while the flight drains to the new window.
#![deny(clippy::arithmetic_side_effects)]

use serde::{Deserialize, Serialize};

/// How the window is set during fast recovery.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// The controller's window as it set it on the loss (default): whatever the window
    /// exceeds the pipe by leaves at once (RFC 6675 §5).
    #[default]
    Window,
    /// Proportional Rate Reduction (RFC 9937).
    Prr,
}

impl Recovery {
    pub fn is_window(&self) -> bool {
        *self == Recovery::Window
    }
}

/// One fast recovery's PRR state (RFC 9937 §5's variables), in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prr {
    /// The flight when recovery began (RecoverFS).
    recover_fs: u64,
    /// Bytes the receiver got during recovery (prr_delivered).
    delivered: u64,
    /// Bytes sent during recovery (prr_out).
    out: u64,
    /// The window the last ACK set: pipe + sndcnt.
    cwnd: u64,
}

impl Prr {
    /// Recovery begins with `flight` bytes outstanding (RecoverFS: the data not yet
    /// delivered, the segments just declared lost included).
    pub fn start(flight: u64) -> Self {
        Prr {
            recover_fs: flight.max(1),
            delivered: 0,
            out: 0,
            cwnd: 0,
        }
    }

    /// RFC 9937 §5, on every ACK during recovery (and on entering it): `delivered`
    /// bytes newly acknowledged or SACKed by it, `pipe` the RFC 6675 pipe after it,
    /// `ssthresh` the controller's, `safe_ack`: SND.UNA advanced and no new loss.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, safe_ack: bool, smss: u64) {
        self.delivered = self.delivered.saturating_add(delivered);
        let mut sndcnt = if pipe > ssthresh {
            // Proportional: CEIL(prr_delivered · ssthresh / RecoverFS) - prr_out.
            let share = u128::from(self.delivered)
                .saturating_mul(u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs));
            u64::try_from(share)
                .unwrap_or(u64::MAX)
                .saturating_sub(self.out)
        } else {
            // PRR-CRB, or PRR-SSRB (one segment more) on a safe ACK; at most up to
            // ssthresh.
            let mut n = self.delivered.saturating_sub(self.out).max(delivered);
            if safe_ack {
                n = n.saturating_add(smss);
            }
            n.min(ssthresh.saturating_sub(pipe))
        };
        if self.out == 0 && sndcnt == 0 {
            // Entering recovery: the fast retransmit goes whatever the proportion.
            sndcnt = smss;
        }
        self.cwnd = pipe.saturating_add(sndcnt);
    }

    /// Bytes (data, new or retransmitted) left during recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        self.out = self.out.saturating_add(bytes);
    }

    /// The window for the sends until the next ACK: pipe + sndcnt.
    pub fn window(&self) -> u64 {
        self.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn above_ssthresh_sends_in_proportion() {
        // RecoverFS 20 segments, ssthresh 14 (β = 0.7): 7 segments per 10 delivered.
        let mut p = Prr::start(20 * MSS);
        let mut sent = 0;
        let mut pipe = 19 * MSS; // one segment lost
        for _ in 0..10 {
            pipe -= MSS; // a segment delivered
            p.on_ack(MSS, pipe, 14 * MSS, false, MSS);
            while pipe + MSS <= p.window() {
                p.on_sent(MSS);
                pipe += MSS;
                sent += 1;
            }
        }
        assert_eq!(sent, 7);
    }

    #[test]
    fn below_ssthresh_sends_what_is_delivered_plus_one_on_safe_acks() {
        // Half the flight lost: the pipe is far below ssthresh, yet an ACK delivering
        // one segment allows two (SSRB), or one (CRB) when it shows no progress.
        let mut p = Prr::start(40 * MSS);
        p.on_sent(MSS); // the fast retransmit
        p.on_ack(MSS, 10 * MSS, 28 * MSS, true, MSS);
        assert_eq!(p.window(), 12 * MSS);
        let mut q = Prr::start(40 * MSS);
        q.on_sent(MSS);
        q.on_ack(MSS, 10 * MSS, 28 * MSS, false, MSS);
        assert_eq!(q.window(), 11 * MSS);
        // Never above ssthresh.
        let mut r = Prr::start(40 * MSS);
        r.on_sent(MSS);
        r.on_ack(5 * MSS, 27 * MSS, 28 * MSS, true, MSS);
        assert_eq!(r.window(), 28 * MSS);
    }

    #[test]
    fn the_fast_retransmit_always_goes() {
        let mut p = Prr::start(100 * MSS);
        p.on_ack(0, 99 * MSS, 70 * MSS, false, MSS);
        assert_eq!(p.window(), 100 * MSS);
    }
}
