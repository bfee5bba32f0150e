//! Scripted (deterministic) drops: by datagram index, by flight, by packet type.
//!
//! Flights are counted per link direction: flight 1 starts with the first datagram, and
//! a delivery in the opposite direction makes the next datagram here start a new flight,
//! but only if the current flight already carried a datagram (so a server's first flight
//! is flight 1 even though the client's Initial reached it before it sent anything, and
//! several reverse deliveries in a row start one new flight).

use super::{PacketTypeName, ScriptedDrop};
use quiclab_proto::{coalesced_packets, PacketType};

/// Validates the drop rules; fields are named `drops[i].<field>`.
pub(crate) fn validate(drops: &[ScriptedDrop]) -> Result<(), String> {
    for (i, d) in drops.iter().enumerate() {
        if d.datagrams.contains(&0) {
            return Err(format!("drops[{i}].datagrams are 1-based: 0 never matches"));
        }
        if d.flight == Some(0) {
            return Err(format!("drops[{i}].flight is 1-based: must be at least 1"));
        }
        if d.from_datagram == Some(0) || d.to_datagram == Some(0) {
            return Err(format!(
                "drops[{i}].from_datagram/to_datagram are 1-based: must be at least 1"
            ));
        }
        if d.flight.is_none() && (d.from_datagram.is_some() || d.to_datagram.is_some()) {
            return Err(format!(
                "drops[{i}].from_datagram/to_datagram need drops[{i}].flight"
            ));
        }
        if let (Some(from), Some(to)) = (d.from_datagram, d.to_datagram) {
            if to < from {
                return Err(format!(
                    "drops[{i}].to_datagram must be >= drops[{i}].from_datagram"
                ));
            }
        }
        // An empty rule would drop everything: almost surely a typo in a scenario.
        if d.datagrams.is_empty() && d.flight.is_none() && d.packet_type.is_none() {
            return Err(format!("drops[{i}] needs datagrams, flight or packet_type"));
        }
    }
    Ok(())
}

/// Bit set of the [`PacketTypeName`]s found in a datagram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TypeSet(u8);

impl TypeSet {
    fn bit(t: PacketTypeName) -> u8 {
        match t {
            PacketTypeName::Initial => 1,
            PacketTypeName::ZeroRtt => 2,
            PacketTypeName::Handshake => 4,
            PacketTypeName::OneRtt => 8,
        }
    }
    pub(crate) fn contains(self, t: PacketTypeName) -> bool {
        self.0 & Self::bit(t) != 0
    }
    fn insert(&mut self, t: PacketTypeName) {
        self.0 |= Self::bit(t);
    }
}

/// The packet types of the (possibly coalesced) packets in `datagram`. Long header
/// packets carry a Length, so the walk steps over them; a short header packet, a packet
/// without Length (Retry, Version Negotiation) or bytes that do not parse (padding,
/// garbage) end it. Never panics.
pub(crate) fn classify(datagram: &[u8]) -> TypeSet {
    let mut set = TypeSet::default();
    for (h, _) in coalesced_packets(datagram) {
        let name = match h.ty {
            PacketType::Initial => Some(PacketTypeName::Initial),
            PacketType::ZeroRtt => Some(PacketTypeName::ZeroRtt),
            PacketType::Handshake => Some(PacketTypeName::Handshake),
            PacketType::OneRtt => Some(PacketTypeName::OneRtt),
            PacketType::Retry | PacketType::VersionNegotiation => None,
        };
        if let Some(n) = name {
            set.insert(n);
        }
    }
    set
}

/// Where a datagram sits in this direction's sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    /// 1-based index of the datagram in this direction.
    pub index: u64,
    /// 1-based flight number.
    pub flight: u32,
    /// 1-based index within the flight.
    pub in_flight: u32,
}

/// Datagram and flight counters.
#[derive(Debug)]
pub(crate) struct FlightCounter {
    index: u64,
    flight: u32,
    in_flight: u32,
    new_flight_pending: bool,
}

impl FlightCounter {
    pub(crate) fn new() -> Self {
        FlightCounter {
            index: 0,
            flight: 1,
            in_flight: 0,
            new_flight_pending: false,
        }
    }

    /// Counts the next datagram and returns its position.
    pub(crate) fn next(&mut self) -> Position {
        if self.new_flight_pending {
            self.new_flight_pending = false;
            self.flight = self.flight.saturating_add(1);
            self.in_flight = 0;
        }
        self.index += 1;
        self.in_flight = self.in_flight.saturating_add(1);
        Position {
            index: self.index,
            flight: self.flight,
            in_flight: self.in_flight,
        }
    }

    /// The opposite direction delivered a datagram.
    pub(crate) fn on_reverse_delivery(&mut self) {
        if self.in_flight > 0 {
            self.new_flight_pending = true;
        }
    }

    /// Datagrams counted so far.
    pub(crate) fn datagrams(&self) -> u64 {
        self.index
    }
}

/// The drop rules with how often each has fired.
#[derive(Debug)]
pub(crate) struct ScriptedState {
    rules: Vec<ScriptedDrop>,
    fired: Vec<u64>,
    /// Whether any rule needs the packet types (skip parsing otherwise).
    needs_types: bool,
}

impl ScriptedState {
    /// `rules` must have passed [`validate`].
    pub(crate) fn new(rules: Vec<ScriptedDrop>) -> Self {
        let needs_types = rules.iter().any(|r| r.packet_type.is_some());
        let fired = vec![0; rules.len()];
        ScriptedState {
            rules,
            fired,
            needs_types,
        }
    }

    /// Whether a rule drops this datagram. The first matching rule that has not used up
    /// its `max_drops` fires and is charged; the conditions of one rule all must hold.
    pub(crate) fn should_drop(&mut self, pos: Position, datagram: &[u8]) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let types = if self.needs_types {
            classify(datagram)
        } else {
            TypeSet::default()
        };
        for (rule, fired) in self.rules.iter().zip(self.fired.iter_mut()) {
            if rule.max_drops.is_some_and(|m| *fired >= m) {
                continue;
            }
            if matches(rule, pos, types) {
                *fired += 1;
                return true;
            }
        }
        false
    }

    /// Whether there are no rules (nothing is ever dropped).
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// How many times each rule has fired, in config order.
    pub(crate) fn fired(&self) -> &[u64] {
        &self.fired
    }
}

fn matches(rule: &ScriptedDrop, pos: Position, types: TypeSet) -> bool {
    if !rule.datagrams.is_empty() && !rule.datagrams.contains(&pos.index) {
        return false;
    }
    if let Some(f) = rule.flight {
        let from = rule.from_datagram.unwrap_or(1);
        let to = rule.to_datagram.unwrap_or(u32::MAX);
        if pos.flight != f || pos.in_flight < from || pos.in_flight > to {
            return false;
        }
    }
    if let Some(t) = rule.packet_type {
        if !types.contains(t) {
            return false;
        }
    }
    true
}

/// Real-looking (unprotected) packets for tests.
#[cfg(test)]
pub(crate) mod testutil {
    use quiclab_proto::raw::{write_long_header, write_short_header};
    use quiclab_proto::{varint, ConnectionId, PacketType};

    /// Appends a long header packet with `payload` bytes after the packet number.
    pub(crate) fn long_packet(buf: &mut Vec<u8>, ty: PacketType, version: u32, payload: usize) {
        let dcid = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let scid = ConnectionId::new(&[9; 8]).unwrap();
        let offs = write_long_header(buf, ty, version, &dcid, &scid, &[], 0, 2);
        buf.extend(std::iter::repeat_n(0xaa, payload));
        let len = (buf.len() - offs.pn_offset) as u64;
        varint::patch_u14(buf, offs.length_offset, len);
    }

    /// Appends a short header packet (it runs to the end of the datagram).
    pub(crate) fn short_packet(buf: &mut Vec<u8>, payload: usize) {
        let dcid = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        write_short_header(buf, &dcid, false, false, 7, 2);
        buf.extend(std::iter::repeat_n(0x55, payload));
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{long_packet, short_packet};
    use super::*;
    use quiclab_proto::{VERSION_1, VERSION_2};

    #[test]
    fn classifies_coalesced_packets() {
        let mut d = Vec::new();
        long_packet(&mut d, PacketType::Initial, VERSION_1, 100);
        long_packet(&mut d, PacketType::Handshake, VERSION_1, 50);
        short_packet(&mut d, 30);
        let t = classify(&d);
        assert!(t.contains(PacketTypeName::Initial));
        assert!(t.contains(PacketTypeName::Handshake));
        assert!(t.contains(PacketTypeName::OneRtt));
        assert!(!t.contains(PacketTypeName::ZeroRtt));

        // Initial padded with zeros: the padding ends the walk.
        let mut d = Vec::new();
        long_packet(&mut d, PacketType::Initial, VERSION_2, 100);
        d.resize(1200, 0);
        assert_eq!(classify(&d), {
            let mut s = TypeSet::default();
            s.insert(PacketTypeName::Initial);
            s
        });
        let mut d = Vec::new();
        long_packet(&mut d, PacketType::ZeroRtt, VERSION_1, 10);
        assert!(classify(&d).contains(PacketTypeName::ZeroRtt));
    }

    #[test]
    fn classify_never_panics() {
        assert_eq!(classify(&[]), TypeSet::default());
        let mut d = Vec::new();
        long_packet(&mut d, PacketType::Handshake, VERSION_1, 40);
        for cut in 0..d.len() {
            let _ = classify(&d[..cut]);
        }
        // Every single-byte corruption of a coalesced datagram.
        short_packet(&mut d, 5);
        for i in 0..d.len() {
            for b in [0x00, 0x40, 0x80, 0xc0, 0xff] {
                let mut e = d.clone();
                e[i] = b;
                let _ = classify(&e);
            }
        }
        // Pseudo-random garbage.
        let mut rng = quiclab_proto::DetRng::new(4);
        for len in 0..300 {
            let mut g = vec![0u8; len];
            rng.fill(&mut g);
            let _ = classify(&g);
        }
    }

    #[test]
    fn flights_count_once_per_reverse_run() {
        let mut c = FlightCounter::new();
        c.on_reverse_delivery(); // before anything was sent: still flight 1
        assert_eq!(c.next().flight, 1);
        assert_eq!(c.next().in_flight, 2);
        c.on_reverse_delivery();
        c.on_reverse_delivery();
        let p = c.next();
        assert_eq!((p.index, p.flight, p.in_flight), (3, 2, 1));
        c.on_reverse_delivery();
        assert_eq!(c.next().flight, 3);
        assert_eq!(c.datagrams(), 4);
    }

    #[test]
    fn validation() {
        let ok = ScriptedDrop {
            flight: Some(2),
            ..Default::default()
        };
        assert!(validate(&[ok]).is_ok());
        let bad = [
            ScriptedDrop::default(),
            ScriptedDrop {
                datagrams: vec![0],
                ..Default::default()
            },
            ScriptedDrop {
                flight: Some(0),
                ..Default::default()
            },
            ScriptedDrop {
                from_datagram: Some(2),
                ..Default::default()
            },
            ScriptedDrop {
                flight: Some(1),
                from_datagram: Some(3),
                to_datagram: Some(2),
                ..Default::default()
            },
        ];
        for b in bad {
            let e = validate(std::slice::from_ref(&b)).unwrap_err();
            assert!(e.starts_with("drops[0]"), "{e}");
        }
    }
}
