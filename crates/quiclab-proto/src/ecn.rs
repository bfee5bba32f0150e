//! The ECN codepoint of an IP packet (RFC 3168 §5), as it crosses the sans-IO
//! boundary: each [`crate::Transmit`] says which codepoint to set, and a driver hands
//! each received datagram in with the codepoint it arrived with.

/// The two ECN bits of the IP header (the low bits of the IPv4 TOS byte or the IPv6
/// traffic class).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// Not-ECT (0b00): the sender does not use ECN.
    #[default]
    NotEct,
    /// ECT(1) (0b01): ECN-capable; L4S senders use it (RFC 9331).
    Ect1,
    /// ECT(0) (0b10): ECN-capable, the classic codepoint (RFC 3168).
    Ect0,
    /// CE (0b11): congestion experienced, set by a router's queue.
    Ce,
}

impl Ecn {
    /// The codepoint of the low two bits of a TOS / traffic-class byte.
    pub fn from_bits(tos: u8) -> Ecn {
        match tos & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits, to OR into a TOS / traffic-class byte.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// Whether the packet was sent ECN-capable (ECT(0), ECT(1) or since marked CE).
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

#[cfg(test)]
mod tests {
    use super::Ecn;

    #[test]
    fn bits_round_trip_and_ignore_dscp() {
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e.bits()), e);
            assert_eq!(Ecn::from_bits(0xb8 | e.bits()), e); // DSCP EF set above
        }
        assert!(!Ecn::NotEct.is_ect() && Ecn::Ce.is_ect());
    }
}
