//! ECN on the connection's path (RFC 9000 §13.4): the codepoint each packet is sent
//! with, the counts of codepoints received per packet number space (§13.4.1), and the
//! validation of the peer's counts (§13.4.2; the states of Appendix A.4). The
//! connection drives it from `ecn.rs`; it reads no clock and knows no frame.
//!
//! Sending: with `ecn = "ect0" | "ect1"` every packet carries that codepoint until
//! validation fails, then not-ECT for the rest of the connection (quiclab has one path
//! and no migration, so the path's state is the connection's). Appendix A.4 sends
//! unmarked packets in its "unknown" state; quiclab keeps marking there (RFC 9000
//! §13.4.2 marks early packets and allows other strategies), so that every packet is
//! ECT as the interop runner's `ecn` case checks. The testing period is §13.4.2's
//! example: the first [`TESTING_PACKETS`] packets, or [`TESTING_PTOS`] PTOs from the
//! first, whichever ends first.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use crate::ecn::{Ecn, EcnFailure, EcnMode, EcnState};
use crate::recovery::SpaceId;
use crate::time::Instant;
use crate::wire::EcnCounts;
use std::time::Duration;

/// RFC 9000 §13.4.2: "the first ten outgoing packets" (QUIC packets here: each one is
/// acknowledged or lost on its own).
pub const TESTING_PACKETS: u64 = 10;
/// RFC 9000 §13.4.2: "a period of three PTOs".
pub const TESTING_PTOS: u32 = 3;

/// What a connection knows of ECN, for tests, drivers and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnReport {
    /// `None` with `ecn = "off"`: nothing is marked and nothing validated.
    pub state: Option<EcnState>,
    /// Why validation failed, once it did.
    pub failure: Option<EcnFailure>,
    /// The codepoint packets are sent with now.
    pub sending: Ecn,
    /// Codepoints of the packets we processed, per space (Initial, Handshake,
    /// application data): what our ACK frames report (RFC 9000 §13.4.1).
    pub received: [EcnCounts; 3],
    /// The peer's counts in its last validated ACK, per space.
    pub peer_reported: [EcnCounts; 3],
    /// Packets we sent ECT(0) / ECT(1) marked, per space.
    pub sent_ect0: [u64; 3],
    pub sent_ect1: [u64; 3],
    /// ACKs whose CE count grew, each handed to the congestion controller as a
    /// congestion event (which reduces at most once per round trip, RFC 9002 §7.1).
    pub ce_signals: u64,
}

/// The path's ECN state (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct EcnPath {
    mode: EcnMode,
    state: EcnState,
    failure: Option<EcnFailure>,
    /// When the first testing packet left.
    testing_started: Option<Instant>,
    /// Packets sent in the testing period so far, every space.
    testing_count: u64,
    /// Per space: packets sent in the testing period, and those of them acknowledged or
    /// declared lost (a discarded space's unsettled ones leave the count).
    testing_sent: [u64; 3],
    testing_settled: [u64; 3],
    /// Per space: the next packet number when testing ended (packets below it were the
    /// testing period's); `None` while testing.
    testing_end: Option<[u64; 3]>,
    /// Per space: one past the largest packet number sent.
    next_pn: [u64; 3],
    /// A validated ACK newly acknowledged marked packets and an ECT count grew: marks
    /// reach the peer un-CE'd.
    ect_arrived: bool,
    sent_ect: [[u64; 2]; 3],
    peer: [EcnCounts; 3],
    received: [EcnCounts; 3],
    ce_signals: u64,
    /// State changes not yet logged (old, new); at most three ever (the states only
    /// move forward).
    changes: Vec<(Option<EcnState>, EcnState)>,
}

impl EcnPath {
    pub fn new(mode: EcnMode) -> Self {
        let changes = if mode.is_off() {
            Vec::new()
        } else {
            vec![(None, EcnState::Testing)]
        };
        EcnPath {
            mode,
            state: EcnState::Testing,
            failure: None,
            testing_started: None,
            testing_count: 0,
            testing_sent: [0; 3],
            testing_settled: [0; 3],
            testing_end: None,
            next_pn: [0; 3],
            ect_arrived: false,
            sent_ect: [[0; 2]; 3],
            peer: [EcnCounts::default(); 3],
            received: [EcnCounts::default(); 3],
            ce_signals: 0,
            changes,
        }
    }

    /// The codepoint to send packets with now.
    pub fn codepoint(&self) -> Ecn {
        match self.mode.codepoint() {
            Some(ect) if self.state != EcnState::Failed => ect,
            _ => Ecn::NotEct,
        }
    }

    /// A packet `pn` of `space` leaves now (`pto`: the path's current PTO, for the
    /// testing period's length); returns the codepoint it carries.
    pub fn on_sent(&mut self, now: Instant, space: SpaceId, pn: u64, pto: Duration) -> Ecn {
        let ecn = self.codepoint();
        let s = space as usize;
        self.next_pn[s] = self.next_pn[s].max(pn.saturating_add(1));
        if !ecn.is_ect() {
            return ecn;
        }
        let i = usize::from(ecn == Ecn::Ect1);
        self.sent_ect[s][i] = self.sent_ect[s][i].saturating_add(1);
        if self.state == EcnState::Testing {
            let started = *self.testing_started.get_or_insert(now);
            let limit = pto.saturating_mul(TESTING_PTOS);
            if self.testing_count >= TESTING_PACKETS
                || now.saturating_duration_since(started) >= limit
            {
                let mut end = self.next_pn;
                end[s] = pn; // this packet is the first after the testing period
                self.testing_end = Some(end);
                self.set_state(EcnState::Unknown);
                self.advance();
            } else {
                self.testing_count = self.testing_count.saturating_add(1);
                self.testing_sent[s] = self.testing_sent[s].saturating_add(1);
            }
        }
        ecn
    }

    /// Whether packet `pn` of `space` was sent in the testing period.
    fn is_testing(&self, space: SpaceId, pn: u64) -> bool {
        match self.testing_end {
            None => self.state == EcnState::Testing,
            Some(end) => pn < end[space as usize],
        }
    }

    /// A packet of `space` was processed; `ecn` is its datagram's codepoint (RFC 9000
    /// §13.4.1: counted once per QUIC packet, coalesced ones each).
    pub fn on_received(&mut self, space: SpaceId, ecn: Ecn) {
        let c = &mut self.received[space as usize];
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => c.ect0 = c.ect0.saturating_add(1),
            Ecn::Ect1 => c.ect1 = c.ect1.saturating_add(1),
            Ecn::Ce => c.ce = c.ce.saturating_add(1),
        }
    }

    /// The counts an ACK frame of `space` carries: `None` (a plain ACK) while all are
    /// zero, so a connection that never receives a mark sends the frames it always did.
    pub fn ack_counts(&self, space: SpaceId) -> Option<EcnCounts> {
        let c = self.received[space as usize];
        (c != EcnCounts::default()).then_some(c)
    }

    /// How many more CE marks an ACK frame of `space` with `counts` reports than the
    /// peer's last validated counts (0: none, or ECN off or failed): recovery turns a
    /// growth into a congestion event (RFC 9002 §7.1) and hands the count to the
    /// controller (scalable controllers estimate their mark fraction from it) in the
    /// same call as the ACK, before [`EcnPath::on_ack`] validates the counts (a CE
    /// increase in an ACK that then fails validation still reduced the window once: the
    /// conservative side).
    pub fn ce_growth(&self, space: SpaceId, counts: Option<EcnCounts>) -> u64 {
        if self.mode.is_off() || self.state == EcnState::Failed {
            return 0;
        }
        counts.map_or(0, |c| c.ce.saturating_sub(self.peer[space as usize].ce))
    }

    /// An ACK frame of `space` with `counts` newly acknowledged `acked` (packet number
    /// and the codepoint it was sent with); `largest_grew`: it raised the largest
    /// acknowledged. Validates the counts (RFC 9000 §13.4.2.1) and returns whether the
    /// CE count grew, a congestion signal (RFC 9002 §7.1, B.7 ProcessECN).
    pub fn on_ack(
        &mut self,
        space: SpaceId,
        largest_grew: bool,
        counts: Option<EcnCounts>,
        acked: impl Iterator<Item = (u64, Ecn)>,
    ) -> bool {
        if self.mode.is_off() || self.state == EcnState::Failed {
            return false;
        }
        let s = space as usize;
        let (mut ect0, mut ect1) = (0u64, 0u64);
        for (pn, ecn) in acked {
            if ecn.is_ect() && self.is_testing(space, pn) {
                self.testing_settled[s] = self.testing_settled[s].saturating_add(1);
            }
            match ecn {
                Ecn::Ect0 => ect0 = ect0.saturating_add(1),
                Ecn::Ect1 => ect1 = ect1.saturating_add(1),
                Ecn::NotEct | Ecn::Ce => {}
            }
        }
        // §13.4.2.1: an ACK that does not raise the largest acknowledged may be a
        // reordered one; it must not fail validation (nor is it used).
        let ce = if largest_grew {
            match self.validate(s, counts, ect0, ect1) {
                Ok(ce) => ce,
                Err(why) => {
                    self.fail(why);
                    return false;
                }
            }
        } else {
            false
        };
        self.advance();
        if ce {
            self.ce_signals = self.ce_signals.saturating_add(1);
        }
        ce
    }

    /// RFC 9000 §13.4.2.1's checks of one ACK's counts against the newly acknowledged
    /// packets sent ECT(0) / ECT(1); on success records them and returns whether CE grew.
    fn validate(
        &mut self,
        s: usize,
        counts: Option<EcnCounts>,
        ect0: u64,
        ect1: u64,
    ) -> Result<bool, EcnFailure> {
        let Some(c) = counts else {
            // Marked packets newly acknowledged without counts: bleached or unreported.
            return if ect0.saturating_add(ect1) > 0 {
                Err(EcnFailure::MissingCounts)
            } else {
                Ok(false)
            };
        };
        let old = self.peer[s];
        if c.ect0 < old.ect0 || c.ect1 < old.ect1 || c.ce < old.ce {
            return Err(EcnFailure::CountsDecreased);
        }
        let d0 = c.ect0.saturating_sub(old.ect0);
        let d1 = c.ect1.saturating_sub(old.ect1);
        let dce = c.ce.saturating_sub(old.ce);
        // More ECT(x) than we ever sent with ECT(x): the network re-marked packets.
        if c.ect0 > self.sent_ect[s][0] || c.ect1 > self.sent_ect[s][1] {
            return Err(EcnFailure::Remarked);
        }
        if d0.saturating_add(dce) < ect0 || d1.saturating_add(dce) < ect1 {
            return Err(EcnFailure::UnderReported);
        }
        self.peer[s] = c;
        if ect0.saturating_add(ect1) > 0 && d0.saturating_add(d1) > 0 {
            self.ect_arrived = true;
        }
        Ok(dce > 0)
    }

    /// A packet `pn` of `space`, sent with `ecn`, was declared lost.
    pub fn on_lost(&mut self, space: SpaceId, pn: u64, ecn: Ecn) {
        if ecn.is_ect() && self.state != EcnState::Failed && self.is_testing(space, pn) {
            let s = space as usize;
            self.testing_settled[s] = self.testing_settled[s].saturating_add(1);
            self.advance();
        }
    }

    /// `space`'s keys were discarded: its unsettled testing packets will never settle.
    pub fn on_space_discarded(&mut self, space: SpaceId) {
        let s = space as usize;
        self.testing_sent[s] = self.testing_settled[s].min(self.testing_sent[s]);
        if self.state != EcnState::Failed {
            self.advance();
        }
    }

    /// Appendix A.4 from "unknown": "capable" once marks were seen arriving; "failed"
    /// once every testing packet is settled without that (all lost or all CE-marked).
    fn advance(&mut self) {
        if self.state != EcnState::Unknown {
            return;
        }
        if self.ect_arrived {
            self.set_state(EcnState::Capable);
            return;
        }
        let sent: u64 = self.testing_sent.iter().sum();
        let settled: u64 = self.testing_settled.iter().sum();
        if sent > 0 && settled >= sent {
            self.fail(EcnFailure::TestingLostOrCe);
        }
    }

    fn fail(&mut self, why: EcnFailure) {
        self.failure.get_or_insert(why);
        self.set_state(EcnState::Failed);
    }

    fn set_state(&mut self, new: EcnState) {
        if self.state != new {
            self.changes.push((Some(self.state), new));
            self.state = new;
        }
    }

    /// The next state change to log (old, new), oldest first.
    pub fn take_change(&mut self) -> Option<(Option<EcnState>, EcnState)> {
        (!self.changes.is_empty()).then(|| self.changes.remove(0))
    }

    pub fn report(&self) -> EcnReport {
        EcnReport {
            state: (!self.mode.is_off()).then_some(self.state),
            failure: self.failure,
            sending: self.codepoint(),
            received: self.received,
            peer_reported: self.peer,
            sent_ect0: self.sent_ect.map(|s| s[0]),
            sent_ect1: self.sent_ect.map(|s| s[1]),
            ce_signals: self.ce_signals,
        }
    }
}

#[cfg(test)]
#[path = "ecn_state_tests.rs"]
mod tests;
