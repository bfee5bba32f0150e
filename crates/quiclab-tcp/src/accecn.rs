//! Accurate ECN feedback's counters (RFC 9768 §3.2): the data receiver's count of
//! CE-marked packets (fed back mod 8 in the ACE field) and of bytes per codepoint (fed
//! back mod 2^24 in the AccECN option), and the data sender's copies, which rebuild
//! from each ACK how many packets were newly marked, wrap-safe (§3.2.2.5.2,
//! Appendix A.2).
#![deny(clippy::arithmetic_side_effects)]

use crate::wire::AccEcnOption;
use quiclab_proto::Ecn;

/// The ACE field's modulus (RFC 9768 Appendix A: DIVACE).
const DIVACE: u64 = 8;
/// The option fields' modulus (24 bits).
const DIVOPT: u64 = 1 << 24;

/// RFC 9768 §3.2.1: the counters' initial values (non-zero to tell them from
/// zeroed fields).
const CEP_INIT: u64 = 5;
const ECT_BYTES_INIT: u64 = 1;

/// Increment-triggered ACKs (§3.2.2.5.1): CE marks since the last ACK that force one,
/// with data outstanding (SHOULD 2) and without (SHOULD 3).
const CE_ACK_WITH_DATA: u32 = 2;
const CE_ACK_WITHOUT_DATA: u32 = 3;

/// The data receiver's side: r.cep, r.e0b, r.e1b, r.ceb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccEcnReceiver {
    cep: u64,
    e0b: u64,
    e1b: u64,
    ceb: u64,
    /// CE marks since the last ACK sent.
    ce_since_ack: u32,
    /// The previous packet arrived CE.
    last_ce: bool,
}

impl Default for AccEcnReceiver {
    fn default() -> Self {
        AccEcnReceiver {
            cep: CEP_INIT,
            e0b: ECT_BYTES_INIT,
            e1b: ECT_BYTES_INIT,
            ceb: 0,
            ce_since_ack: 0,
            last_ce: false,
        }
    }
}

impl AccEcnReceiver {
    /// Counts one acceptable packet (not a SYN) with `payload` bytes that arrived with
    /// `ecn`; true when an ACK must go out now (§3.2.2.5.1: change-triggered on a CE
    /// data packet after a non-CE packet, increment-triggered after `n` CE marks).
    pub fn on_packet(&mut self, ecn: Ecn, payload: u64) -> bool {
        let ce = ecn == Ecn::Ce;
        let counter = match ecn {
            Ecn::NotEct => None,
            Ecn::Ect0 => Some(&mut self.e0b),
            Ecn::Ect1 => Some(&mut self.e1b),
            Ecn::Ce => Some(&mut self.ceb),
        };
        if let Some(c) = counter {
            *c = c.saturating_add(payload);
        }
        let data = payload > 0;
        let changed = ce && !self.last_ce && data;
        self.last_ce = ce;
        if !ce {
            return false;
        }
        self.cep = self.cep.saturating_add(1);
        self.ce_since_ack = self.ce_since_ack.saturating_add(1);
        let n = if data {
            CE_ACK_WITH_DATA
        } else {
            CE_ACK_WITHOUT_DATA
        };
        changed || self.ce_since_ack >= n
    }

    /// §3.2.2.2: the three least significant bits of r.cep.
    pub fn ace(&self) -> u8 {
        (self.cep % DIVACE) as u8
    }

    /// §3.2.2.1 Table 3: a client counts a CE-marked SYN-ACK once (r.cep 5 to 6).
    pub fn on_syn_ack_ce(&mut self) {
        self.cep = CEP_INIT.saturating_add(1);
    }

    /// An ACK went out: the increment-triggered count restarts.
    pub fn on_ack_sent(&mut self) {
        self.ce_since_ack = 0;
    }

    /// The option with `count` fields (0 to 3), in the order that puts the ECT counter
    /// this receiver sees most first, so a truncated option keeps it (§3.2.3).
    pub fn option(&self, count: u8) -> AccEcnOption {
        let low = |v: u64| (v % DIVOPT) as u32;
        AccEcnOption::new(
            self.e1b > self.e0b,
            count,
            low(self.e0b),
            low(self.ceb),
            low(self.e1b),
        )
    }

    /// CE-marked packets counted (r.cep minus its initial value).
    pub fn ce_packets(&self) -> u64 {
        self.cep.saturating_sub(CEP_INIT)
    }
}

/// The data sender's side: s.cep, s.e0b, s.e1b, s.ceb, tracking the peer's counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccEcnSender {
    cep: u64,
    e0b: u64,
    e1b: u64,
    ceb: u64,
}

impl Default for AccEcnSender {
    fn default() -> Self {
        AccEcnSender {
            cep: CEP_INIT,
            e0b: ECT_BYTES_INIT,
            e1b: ECT_BYTES_INIT,
            ceb: 0,
        }
    }
}

/// The smallest increment from `ours` to a counter whose low bits are `field`.
fn delta(field: u64, ours: u64, modulus: u64) -> u64 {
    field
        .wrapping_sub(ours.checked_rem(modulus).unwrap_or(0))
        .wrapping_add(modulus)
        .checked_rem(modulus)
        .unwrap_or(0)
}

impl AccEcnSender {
    /// §3.2.2.1 Table 4: the server's s.cep from the handshake ACK.
    pub fn set_cep(&mut self, cep: u64) {
        self.cep = cep;
    }

    /// Reads one ACK's feedback (not superseded, SYN = 0): the ACE field, the option if
    /// it carried one, and how many of our packets it newly acknowledged (`acked`,
    /// cumulatively or by SACK); returns the packets newly reported CE.
    ///
    /// The ACE field can wrap (mod 8) between ACKs. Without the option the safe
    /// reading is the largest increment the newly acknowledged packets allow
    /// (§3.2.2.5.2, Appendix A.2.1); with the option's ECEB the increment whose packets
    /// best match the newly CE-marked bytes (Appendix A.2.2), `smss` bytes a packet. An
    /// increment above `acked` is taken as it is (§3.2.2.5.2: the ACE is right, our
    /// count of control packets incomplete).
    pub fn on_ack(&mut self, ace: u8, option: Option<&AccEcnOption>, acked: u64, smss: u64) -> u64 {
        let mut d_ceb = None;
        if let Some(o) = option {
            if let Some(v) = o.e0b() {
                self.e0b = self.e0b.saturating_add(delta(v.into(), self.e0b, DIVOPT));
            }
            if let Some(v) = o.e1b() {
                self.e1b = self.e1b.saturating_add(delta(v.into(), self.e1b, DIVOPT));
            }
            if let Some(v) = o.ceb() {
                let d = delta(v.into(), self.ceb, DIVOPT);
                self.ceb = self.ceb.saturating_add(d);
                d_ceb = Some(d);
            }
        }
        let d = delta(u64::from(ace & 7), self.cep, DIVACE);
        // How many more whole cycles of 8 the acknowledged packets leave room for.
        let max_wraps = acked.saturating_sub(d) / DIVACE;
        let wraps = match d_ceb {
            Some(bytes) if max_wraps > 0 => {
                // The cycle count whose packet total is nearest the CE bytes.
                let packets = (bytes.saturating_add(smss / 2))
                    .checked_div(smss.max(1))
                    .unwrap_or(0);
                (packets.saturating_sub(d).saturating_add(DIVACE / 2) / DIVACE).min(max_wraps)
            }
            _ => max_wraps,
        };
        let newly = d.saturating_add(wraps.saturating_mul(DIVACE));
        self.cep = self.cep.saturating_add(newly);
        newly
    }

    /// Bytes the peer reported per codepoint so far: (ECT(0), ECT(1), CE), without the
    /// initial values.
    pub fn bytes(&self) -> (u64, u64, u64) {
        (
            self.e0b.saturating_sub(ECT_BYTES_INIT),
            self.e1b.saturating_sub(ECT_BYTES_INIT),
            self.ceb,
        )
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // expected values in tests
mod tests {
    use super::*;

    #[test]
    fn receiver_starts_at_rfc_values_and_counts_ce() {
        let mut r = AccEcnReceiver::default();
        assert_eq!(r.ace(), 5, "§3.2.1: r.cep = 5");
        let o = r.option(3);
        assert_eq!((o.e0b(), o.ceb(), o.e1b()), (Some(1), Some(0), Some(1)));
        assert!(!r.on_packet(Ecn::Ect0, 1000));
        // Change-triggered: a CE data packet after a non-CE one is ACKed at once.
        assert!(r.on_packet(Ecn::Ce, 1000));
        r.on_ack_sent();
        // Increment-triggered: the second CE mark since the last ACK.
        r.on_packet(Ecn::Ce, 1000);
        assert!(r.on_packet(Ecn::Ce, 1000));
        assert_eq!(r.ce_packets(), 3);
        assert_eq!(r.ace(), 0, "5 + 3 = 8 wraps to 0");
        let o = r.option(3);
        assert!(!o.order1, "ECT(0) seen most: order 0");
        assert_eq!((o.e0b(), o.ceb()), (Some(1001), Some(3000)));
        // Not-ECT packets count nowhere.
        let before = r.clone();
        r.on_packet(Ecn::NotEct, 500);
        assert_eq!(
            (r.cep, r.e0b, r.e1b, r.ceb),
            (before.cep, before.e0b, before.e1b, before.ceb)
        );
    }

    #[test]
    fn byte_counters_wrap_at_24_bits_on_the_wire() {
        let mut r = AccEcnReceiver::default();
        r.on_packet(Ecn::Ect1, DIVOPT); // 1 + 2^24 bytes
        let o = r.option(3);
        assert!(o.order1, "ECT(1) seen most: order 1, EE1B first");
        assert_eq!(o.e1b(), Some(1));
        // The sender, one 2^24 wrap behind, sees the smallest increment: 0.
        let mut s = AccEcnSender::default();
        s.on_ack(5, Some(&o), 1, 1000);
        assert_eq!(s.bytes().1, 0);
    }

    #[test]
    fn ace_delta_is_mod_8() {
        let mut s = AccEcnSender::default();
        assert_eq!(s.on_ack(5, None, 2, 1000), 0);
        assert_eq!(s.on_ack(7, None, 2, 1000), 2);
        // 7 -> 1 wraps: 2 more.
        assert_eq!(s.on_ack(1, None, 2, 1000), 2);
        // More marks than acknowledged packets: the ACE is believed (§3.2.2.5.2).
        assert_eq!(s.on_ack(0, None, 1, 1000), 7);
    }

    #[test]
    fn ambiguous_wraps_take_the_safe_case_without_the_option() {
        // 20 packets acknowledged at once, ACE up by 3: 3, 11 or 19 marks are
        // possible; Appendix A.2.1's safe reading is 19.
        let mut s = AccEcnSender::default();
        assert_eq!(s.on_ack(0, None, 20, 1000), 19);
        // Fewer than d + 8 acknowledged: no wrap possible.
        let mut s = AccEcnSender::default();
        assert_eq!(s.on_ack(0, None, 10, 1000), 3);
    }

    #[test]
    fn the_option_disambiguates_wraps() {
        // Same ACK, but ECEB says 11 packets' worth of CE bytes: 11.
        let mut s = AccEcnSender::default();
        let o = AccEcnOption::new(false, 2, 1, 11_000, 0);
        assert_eq!(s.on_ack(0, Some(&o), 20, 1000), 11);
        assert_eq!(s.bytes().2, 11_000);
        // ECEB of 3 packets: no wrap.
        let mut s = AccEcnSender::default();
        let o = AccEcnOption::new(false, 2, 1, 3_000, 0);
        assert_eq!(s.on_ack(0, Some(&o), 20, 1000), 3);
        // A truncated option without ECEB falls back to the safe reading.
        let mut s = AccEcnSender::default();
        let o = AccEcnOption::new(false, 1, 1, 0, 0);
        assert_eq!(s.on_ack(0, Some(&o), 20, 1000), 19);
    }

    #[test]
    fn reconstruction_tracks_a_receiver_through_many_wraps() {
        // Receiver and sender in lock step; ACKs every 3 packets, each packet CE with
        // a pattern; the sender's total equals the receiver's after 999 packets.
        let mut r = AccEcnReceiver::default();
        let mut s = AccEcnSender::default();
        let mut total = 0;
        for i in 0u64..999 {
            let ecn = if i % 3 != 1 { Ecn::Ce } else { Ecn::Ect1 };
            r.on_packet(ecn, 1000);
            if i % 3 == 2 {
                total += s.on_ack(r.ace(), Some(&r.option(3)), 3, 1000);
                r.on_ack_sent();
            }
        }
        assert_eq!(total, r.ce_packets());
        // Every 10th ACK lost: the option still recovers the count exactly.
        let mut r = AccEcnReceiver::default();
        let mut s = AccEcnSender::default();
        let (mut total, mut pending) = (0, 0);
        for i in 0u64..3000 {
            r.on_packet(Ecn::Ce, 1000);
            pending += 1;
            if i % 40 == 39 {
                total += s.on_ack(r.ace(), Some(&r.option(3)), pending, 1000);
                pending = 0;
            }
        }
        assert_eq!(total, r.ce_packets());
    }

    proptest::proptest! {
        /// Whatever a peer writes into ACE and the option: no panic, s.cep never goes
        /// back, and an ACK never reports more marks than the packets it acknowledged
        /// beyond the 7 a single ACE step can claim.
        #[test]
        fn arbitrary_feedback_is_bounded(acks in proptest::collection::vec(
            (0u8..8, proptest::option::of((proptest::bool::ANY, 0u8..=3, proptest::prelude::any::<(u32, u32, u32)>())),
             0u64..100, 0u64..3000),
            0..64,
        )) {
            let mut s = AccEcnSender::default();
            for (ace, opt, acked, smss) in acks {
                let o = opt.map(|(o1, n, (a, b, c))| AccEcnOption::new(o1, n, a, b, c));
                let before = s.cep;
                let newly = s.on_ack(ace, o.as_ref(), acked, smss);
                proptest::prop_assert!(newly <= acked.max(7));
                proptest::prop_assert_eq!(s.cep, before + newly);
            }
        }
    }

    #[test]
    fn peer_values_never_overflow() {
        let mut s = AccEcnSender {
            cep: u64::MAX - 1,
            e0b: u64::MAX,
            e1b: u64::MAX,
            ceb: u64::MAX,
        };
        let o = AccEcnOption::new(false, 3, 0xff_ffff, 0xff_ffff, 0xff_ffff);
        s.on_ack(7, Some(&o), u64::MAX, 0);
        assert_eq!(s.cep, u64::MAX);
    }
}
