//! Datagram Packetization Layer PMTU Discovery (DPLPMTUD, RFC 9000 §14.3, RFC 8899
//! §5): once the handshake is confirmed, and only while the connection has data to
//! send, the sender probes for larger datagrams with packets of PING and PADDING. An
//! acknowledged probe raises the datagram size; a size whose probe is lost
//! [`MAX_PROBES`] times in a row is taken as too big. The search climbs the common
//! plateaus of [`PLATEAUS`] and then the upper bound (RFC 8899 §5.3.2's table of likely
//! sizes), so a typical path confirms Ethernet's size with one probe and a jumbo or
//! loopback path climbs in two or three, and stops at the first plateau that fails.
//! Only when not even the first one passes (a tunnel, a smaller link) does it bisect
//! between the base and that failure. Lost probes are not congestion signals (RFC 9000
//! §14.4): the loss detector hands them here instead of to the controller. The first
//! probe waits [`FIRST_PROBE_AFTER_RTTS`] round trips, so only transfers longer than
//! that probe at all.
//!
//! Not done: black-hole detection after the search (RFC 8899 §4.3, a confirmed size
//! that later stops working) and re-probing after PMTU_RAISE_TIMER (§5.1.1); a
//! connection keeps the size it found. There is no path migration to reset it on.

use crate::path_recovery::MtuProbe;

/// RFC 8899 §5.1.2 MAX_PROBES: losses of one probe size before it counts as too big.
pub const MAX_PROBES: u8 = 3;
/// The search stops when the next bisection step would gain less than this (bytes).
const MIN_STEP: u16 = 16;
/// Likely path limits, as UDP payloads under IPv6 (safe under IPv4 too): a 1500-byte
/// Ethernet MTU and a 9000-byte jumbo one. The configured bound comes after them.
pub const PLATEAUS: [u16; 2] = [1452, 8952];
/// The first probe waits this many smoothed RTTs after the handshake is confirmed (as
/// quic-go does), so a short exchange never spends a window slot or a datagram's
/// serialisation on a probe ahead of its data.
pub const FIRST_PROBE_AFTER_RTTS: u32 = 5;

/// One path's PMTU search state (RFC 8899 §5.2's SEARCHING and SEARCH_COMPLETE).
#[derive(Debug)]
pub(super) struct Pmtud {
    /// The largest UDP payload confirmed (the configured base until a probe is acked).
    current: u16,
    /// The upper bound: the configuration's, lowered to the peer's
    /// max_udp_payload_size once that is known.
    max: u16,
    /// The smallest size taken as too big; `max + 1` while none has failed.
    too_big: u32,
    /// The probe in flight: packet number and size.
    outstanding: Option<(u64, u16)>,
    /// Consecutive losses of the current candidate size.
    failures: u8,
    /// A probe was acknowledged: a failure above ends the search (no bisection).
    confirmed_any: bool,
    /// The first plateau failed with nothing confirmed: bisecting below it.
    bisecting: bool,
}

/// What an acknowledged or lost probe changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PmtuChange {
    pub old: u16,
    pub new: u16,
    pub done: bool,
}

impl Pmtud {
    /// A search from `base` (already usable) up to `max`.
    pub fn new(base: u16, max: u16) -> Self {
        Pmtud {
            current: base,
            max,
            too_big: u32::from(max) + 1,
            outstanding: None,
            failures: 0,
            confirmed_any: false,
            bisecting: false,
        }
    }

    /// The confirmed maximum UDP payload.
    pub fn current(&self) -> u16 {
        self.current
    }

    /// The peer's max_udp_payload_size (RFC 9000 §18.2) bounds the search.
    pub fn limit_to_peer(&mut self, peer_max: u64) {
        let peer = u16::try_from(peer_max).unwrap_or(u16::MAX);
        if peer < self.max {
            self.max = peer.max(self.current);
            self.too_big = self.too_big.min(u32::from(self.max) + 1);
        }
    }

    /// The size of the next probe, if one is due now.
    pub fn probe_size(&self) -> Option<u16> {
        if self.outstanding.is_some() {
            return None;
        }
        self.candidate()
    }

    /// The next size to try: the next plateau (or the bound) above what is confirmed
    /// and below what failed; after a failure with nothing confirmed yet, the middle of
    /// the two; `None` when the search is over.
    fn candidate(&self) -> Option<u16> {
        if self.bisecting {
            let mid = (u32::from(self.current) + self.too_big) / 2;
            let mid = u16::try_from(mid).ok()?;
            return (mid >= self.current + MIN_STEP).then_some(mid);
        }
        // A plateau that failed above a confirmed one ends the climb there.
        PLATEAUS
            .into_iter()
            .chain([self.max])
            .find(|&p| p > self.current && p <= self.max)
            .filter(|&p| u32::from(p) < self.too_big)
    }

    /// Nothing is left to try.
    fn done(&self) -> bool {
        self.candidate().is_none()
    }

    pub fn on_probe_sent(&mut self, pn: u64, size: u16) {
        self.outstanding = Some((pn, size));
    }

    /// The probe in flight, for loss recovery: its packet number and the size its
    /// acknowledgement confirms.
    pub fn outstanding(&self) -> Option<MtuProbe> {
        self.outstanding.map(|(pn, size)| MtuProbe {
            pn,
            confirms: u64::from(self.current.max(size)),
        })
    }

    /// Whether packet `pn` (1-RTT space) is the outstanding probe.
    pub fn is_probe(&self, pn: u64) -> bool {
        self.outstanding.is_some_and(|(p, _)| p == pn)
    }

    /// The probe `pn` was acknowledged: its size is now usable.
    pub fn on_acked(&mut self, pn: u64) -> Option<PmtuChange> {
        let (_, size) = self.outstanding.filter(|&(p, _)| p == pn)?;
        self.outstanding = None;
        self.failures = 0;
        self.confirmed_any = true;
        let old = self.current;
        self.current = self.current.max(size);
        Some(PmtuChange {
            old,
            new: self.current,
            done: self.done(),
        })
    }

    /// The probe `pn` was declared lost; a change when the search ended on it.
    pub fn on_lost(&mut self, pn: u64) -> Option<PmtuChange> {
        let (_, size) = self.outstanding.filter(|&(p, _)| p == pn)?;
        self.outstanding = None;
        self.failures += 1;
        if self.failures < MAX_PROBES {
            return None;
        }
        self.failures = 0;
        self.too_big = u32::from(size);
        self.bisecting |= !self.confirmed_any;
        self.done().then_some(PmtuChange {
            old: self.current,
            new: self.current,
            done: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a search against a path that carries payloads up to `path_max`.
    fn search(base: u16, max: u16, path_max: u16) -> (u16, u32) {
        let mut p = Pmtud::new(base, max);
        let mut probes = 0;
        let mut pn = 0;
        while let Some(size) = p.probe_size() {
            probes += 1;
            assert!(probes < 100, "search does not end");
            p.on_probe_sent(pn, size);
            if size <= path_max {
                p.on_acked(pn);
            } else {
                p.on_lost(pn);
            }
            pn += 1;
        }
        (p.current(), probes)
    }

    #[test]
    fn upper_bound_first_when_the_path_carries_it() {
        assert_eq!(search(1200, 1452, 1500), (1452, 1));
    }

    #[test]
    fn bisects_below_a_smaller_path_mtu() {
        let (found, probes) = search(1200, 1452, 1300);
        assert!(found <= 1300 && found + MIN_STEP > 1300, "found {found}");
        // Each too-big size is tried MAX_PROBES times.
        assert!(probes <= 3 * 10, "{probes} probes");
    }

    #[test]
    fn a_path_at_the_base_keeps_the_base() {
        assert_eq!(search(1200, 1452, 1200).0, 1200);
    }

    #[test]
    fn a_large_bound_is_climbed_by_plateaus() {
        // Loopback: Ethernet's size, the jumbo size, then the bound.
        assert_eq!(search(1200, 65507, 65507), (65507, 3));
        // A jumbo path: the bound fails three times, the jumbo plateau stays.
        assert_eq!(search(1200, 65507, 8972), (8952, 2 + MAX_PROBES as u32));
        // An Ethernet path: no bisection between the plateaus.
        assert_eq!(search(1200, 65507, 1472), (1452, 1 + MAX_PROBES as u32));
    }

    #[test]
    fn a_bound_between_plateaus_is_tried_after_them() {
        assert_eq!(search(1200, 4000, 4000), (4000, 2));
        assert_eq!(search(1200, 4000, 2000), (1452, 1 + MAX_PROBES as u32));
    }

    #[test]
    fn one_loss_is_not_enough_to_give_up_a_size() {
        let mut p = Pmtud::new(1200, 1452);
        p.on_probe_sent(7, 1452);
        assert_eq!(p.on_lost(7), None);
        assert_eq!(p.probe_size(), Some(1452));
        p.on_probe_sent(8, 1452);
        let c = p.on_acked(8).unwrap();
        assert_eq!((c.old, c.new, c.done), (1200, 1452, true));
        assert_eq!(p.probe_size(), None);
    }

    #[test]
    fn the_peer_limit_bounds_the_search() {
        let mut p = Pmtud::new(1200, 1452);
        p.limit_to_peer(1350);
        assert_eq!(p.probe_size(), Some(1350));
        p.limit_to_peer(1200);
        assert_eq!(p.probe_size(), None);
        assert_eq!(p.current(), 1200);
    }

    #[test]
    fn only_the_outstanding_probe_counts() {
        let mut p = Pmtud::new(1200, 1452);
        p.on_probe_sent(3, 1452);
        assert!(!p.is_probe(2));
        assert_eq!(p.on_acked(2), None);
        assert_eq!(p.on_lost(4), None);
        assert!(p.is_probe(3));
    }
}
