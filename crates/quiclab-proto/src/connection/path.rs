//! The network path's state (the model: quinn-proto's `PathData`): where datagrams go,
//! the path's loss recovery (`path_recovery::Recovery`: sent packets, RTT estimator,
//! congestion controller, PTO backoff, delivery-rate and spurious-loss estimators), the
//! pacer, the PMTU search, and the anti-amplification budget before the peer's address
//! is validated.
//!
//! Kept apart from [`super::Connection`] so that everything a path migration would have
//! to reset or duplicate sits in one place; the connection drives it (loss detection in
//! `loss.rs`, the send path in `send.rs`) and reads it through these fields and methods.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::SentRecord;
use crate::cc::CongestionController;
use crate::config::TransportConfig;
use crate::path_recovery::Recovery;
use crate::recovery::{Pacer, PacingRate};
use crate::wire::Side;
use std::net::SocketAddr;
use std::time::Duration;

/// PATH_CHALLENGE data waiting to be echoed; a peer flooding challenges gets answers
/// to the newest ones only (RFC 9000 §8.2.2: it sends more challenges as needed).
pub const MAX_PENDING_PATH_RESPONSES: usize = 16;

/// One path's transport state. Fields are the connection's to read and drive; the
/// methods hold the rules that involve only the path.
pub(super) struct PathData {
    /// Where our datagrams go; it moves with the peer's address (RFC 9000 §9.3,
    /// `migration.rs`).
    pub remote: SocketAddr,
    /// The peer's address is validated (RFC 9000 §8.1); a client's server always is.
    pub validated: bool,
    /// Bytes received/sent before address validation, for the 3x limit (RFC 9000 §8.1).
    pub amplification_received: u64,
    pub amplification_sent: u64,
    /// Loss recovery and congestion control: sent packets, RTT, controller, estimators.
    pub recovery: Recovery<SentRecord>,
    pub pacer: Pacer,
    /// PATH_CHALLENGE data to echo in PATH_RESPONSE frames (RFC 9000 §8.2.2), newest
    /// last, at most [`MAX_PENDING_PATH_RESPONSES`].
    pub responses: Vec<[u8; 8]>,
    /// PMTU discovery (RFC 9000 §14.3), when configured.
    pub pmtud: Option<super::pmtud::Pmtud>,
}

impl PathData {
    /// A fresh path to `remote` with the configured initial RTT and controller `cc`.
    pub fn new(
        config: &TransportConfig,
        side: Side,
        remote: SocketAddr,
        cc: Box<dyn CongestionController>,
    ) -> Self {
        PathData {
            remote,
            validated: side == Side::Client,
            amplification_received: 0,
            amplification_sent: 0,
            recovery: Recovery::new(config.initial_rtt(), cc),
            pacer: new_pacer(config),
            responses: Vec::new(),
            pmtud: new_pmtud(config),
        }
    }

    /// RFC 9000 §14.3: on a new path the PMTU search starts over from the base size.
    pub fn restart_pmtud(&mut self, config: &TransportConfig) {
        if self.pmtud.is_some() {
            self.pmtud = new_pmtud(config);
        }
    }

    /// A datagram of `len` bytes arrived on this path (counted toward the
    /// anti-amplification budget until the address is validated).
    pub fn on_datagram_received(&mut self, len: usize) {
        if !self.validated {
            self.amplification_received = self.amplification_received.saturating_add(len as u64);
        }
    }

    /// A datagram of `len` bytes left on this path.
    pub fn on_datagram_sent(&mut self, len: usize) {
        if !self.validated {
            self.amplification_sent = self.amplification_sent.saturating_add(len as u64);
        }
    }

    /// Before address validation a server may send at most `factor` times what it
    /// received (RFC 9000 §8.1); afterwards there is no limit.
    pub fn amplification_budget(&self, factor: u64) -> u64 {
        if self.validated {
            u64::MAX
        } else {
            (self.amplification_received.saturating_mul(factor))
                .saturating_sub(self.amplification_sent)
        }
    }

    /// The pacer's rate: the controller's if it sets one (BBR), else RFC 9002 §7.7's
    /// 1.25 · cwnd / smoothed_rtt.
    pub fn pacing_rate(&self) -> Option<PacingRate> {
        pacing_rate(&self.recovery)
    }

    /// Queues PATH_CHALLENGE data to echo. Memory stays bounded whatever the peer
    /// sends: the oldest challenges are answered last and dropped first; the peer sends
    /// more PATH_CHALLENGE frames as needed (RFC 9000 §8.2.2).
    pub fn on_path_challenge(&mut self, data: [u8; 8]) {
        if self.responses.len() >= MAX_PENDING_PATH_RESPONSES {
            self.responses.remove(0);
        }
        self.responses.push(data);
    }
}

/// The pacer's rate for a path's `recovery`: the controller's if it sets one (BBR),
/// else RFC 9002 §7.7's 1.25 · cwnd / smoothed_rtt (path 0 and the paths above 0 alike).
pub(super) fn pacing_rate(recovery: &Recovery<SentRecord>) -> Option<PacingRate> {
    match recovery.cc().pacing_rate() {
        Some(r) => PacingRate::from_bytes_per_sec(r),
        None => PacingRate::from_window(recovery.cc().window(), recovery.rtt().smoothed()),
    }
}

/// A path's pacer as configured (RFC 9002 §7.7).
pub(super) fn new_pacer(config: &TransportConfig) -> Pacer {
    match config.pacing_burst_us {
        None => Pacer::new(u64::from(config.max_udp_payload_size)),
        Some(us) => Pacer::with_burst_interval(
            u64::from(config.max_udp_payload_size),
            Duration::from_micros(us),
        ),
    }
}

/// The PMTU search, when configured (RFC 9000 §14.3).
fn new_pmtud(config: &TransportConfig) -> Option<super::pmtud::Pmtud> {
    config
        .pmtud_max_udp_payload_size
        .filter(|&max| max > 0)
        .map(|max| super::pmtud::Pmtud::new(config.max_udp_payload_size, max))
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn path(side: Side) -> PathData {
        let config = TransportConfig::default();
        let cc = config.congestion_control.build(1200);
        PathData::new(&config, side, "192.0.2.1:443".parse().unwrap(), cc)
    }

    #[test]
    fn a_server_sends_at_most_three_times_what_it_received_until_validated() {
        let mut p = path(Side::Server);
        assert_eq!(p.amplification_budget(3), 0);
        p.on_datagram_received(1200);
        assert_eq!(p.amplification_budget(3), 3600);
        p.on_datagram_sent(3000);
        assert_eq!(p.amplification_budget(3), 600);
        p.validated = true;
        assert_eq!(p.amplification_budget(3), u64::MAX);
        assert_eq!(path(Side::Client).amplification_budget(3), u64::MAX);
    }

    #[test]
    fn path_challenges_are_bounded_and_the_newest_kept() {
        let mut p = path(Side::Client);
        for i in 0..=MAX_PENDING_PATH_RESPONSES {
            p.on_path_challenge([i as u8; 8]);
        }
        assert_eq!(p.responses.len(), MAX_PENDING_PATH_RESPONSES);
        assert_eq!(p.responses[0], [1; 8]);
        assert_eq!(
            *p.responses.last().unwrap(),
            [MAX_PENDING_PATH_RESPONSES as u8; 8]
        );
    }
}
