//! Multipath packet schedulers (draft-ietf-quic-multipath §5.5: "a packet scheduler is
//! needed to decide which path to use for sending the next packet, among those paths
//! with an open congestion window ... The scheduling is a local decision").
//!
//! A leaf module: per packet of new stream data the connection hands a scheduler a
//! small slice of [`Candidate`]s, one per path not abandoned (path 0 included), and
//! gets back the path ID to use, or `None` (no stream data on any path now). Control
//! frames, ACKs, PTO probes and path validation are not scheduled here. One file per
//! scheduler; [`build`] makes the configured one. A scheduler may also ask for copies
//! of each packet's stream data on the other eligible paths ([`PacketScheduler::copies`],
//! the redundant scheduler).
//!
//! Backup paths (§3.3, PATH_STATUS_BACKUP: "no traffic should be sent on that path if
//! another path is available and usable"; "If all established paths are indicated as
//! backup paths, no guidance is provided") are handled once for every scheduler by
//! [`eligible`]: while any path not marked backup is *usable*, only such paths may
//! carry stream data, even when all of them are blocked by their congestion window
//! or pacer (a full window is the path working, not failing: the data waits for it
//! rather than spilling onto a backup path); once none is usable, the usable backup
//! paths carry it. *Usable* ([`Candidate::usable`]) means validated (RFC 9000 §8.2;
//! path 0 counts as validated) and not failed: a path whose probe timeout fired
//! [`FAILED_AFTER_PTOS`] times in a row without an acknowledgment is treated as failed
//! until one arrives (RFC 9002 §6.2: an ACK resets the PTO count); a failed path
//! carries stream data only when every validated path failed (then as without
//! multipath). Abandoned paths (§3.4) are never candidates.

mod min_rtt;
mod redundant;
mod round_robin;

pub use min_rtt::MinRtt;
pub use redundant::{copy_targets, Redundant};
pub use round_robin::RoundRobin;

use crate::config::MultipathScheduler;
use std::time::Duration;

/// Consecutive PTOs without an acknowledgment after which a path is not usable (see
/// the module comment): one PTO is a tail loss, two in a row suggest the path is gone.
pub const FAILED_AFTER_PTOS: u32 = 2;

/// One path that could carry the next packet of stream data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The path ID (draft-ietf-quic-multipath §2; path 0 is the handshake's path).
    pub path_id: u32,
    /// The path's smoothed RTT (RFC 9002 §5.3; the initial RTT before a sample).
    pub srtt: Duration,
    /// Validated by our PATH_CHALLENGE (RFC 9000 §8.2).
    pub validated: bool,
    /// Bytes in flight below the congestion window (RFC 9002 §7).
    pub window_open: bool,
    /// The path's pacer lets a full-sized packet go now (RFC 9002 §7.7).
    pub pacer_ready: bool,
    /// The peer marked the path PATH_STATUS_BACKUP (§3.3).
    pub backup: bool,
    /// The path's PTO count: consecutive probe timeouts since its last ACK.
    pub pto_count: u32,
    /// Bytes in flight on the path.
    pub bytes_in_flight: u64,
    /// The path's congestion window.
    pub cwnd: u64,
}

impl Candidate {
    /// Validated and not failed (see the module comment).
    pub fn usable(&self) -> bool {
        self.validated && self.pto_count < FAILED_AFTER_PTOS
    }

    /// Validated, and its window and pacer let a packet go now (whether it may carry
    /// stream data is [`eligible`]'s to say).
    pub fn can_send(&self) -> bool {
        self.validated && self.window_open && self.pacer_ready
    }
}

/// The candidates that may carry stream data (§3.3, see the module comment): the
/// usable available paths if there is one, else the usable backup paths, else (every
/// validated path failed) the validated paths, as a single path in PTO still sends new
/// data its window allows (RFC 9002 §6.2.4). Never an unvalidated path.
pub fn eligible(candidates: &[Candidate]) -> impl Iterator<Item = &Candidate> {
    let best = candidates.iter().filter_map(tier).min();
    candidates
        .iter()
        .filter(move |c| best.is_some() && tier(c) == best)
}

/// 0: usable and available, 1: usable backup, 2: validated but failed; `None`:
/// unvalidated.
fn tier(c: &Candidate) -> Option<u8> {
    match (c.validated, c.usable(), c.backup) {
        (false, _, _) => None,
        (true, true, false) => Some(0),
        (true, true, true) => Some(1),
        (true, false, _) => Some(2),
    }
}

/// A packet scheduler: picks the path of the next packet of new stream data.
pub trait PacketScheduler: std::fmt::Debug {
    /// The path ID to send the next packet of stream data on, among `candidates` (in
    /// path ID order), or `None` to send none now. Asking has no effect.
    fn pick(&self, candidates: &[Candidate]) -> Option<u32>;

    /// A packet carrying new stream data left on `path_id` as picked.
    fn on_sent(&mut self, _path_id: u32) {}

    /// Whether each packet of stream data is also copied to the other eligible paths
    /// ([`copy_targets`]; only [`Redundant`] does).
    fn copies(&self) -> bool {
        false
    }
}

/// The scheduler the config names.
pub fn build(kind: MultipathScheduler) -> Box<dyn PacketScheduler> {
    match kind {
        MultipathScheduler::MinRtt => Box::new(MinRtt),
        MultipathScheduler::RoundRobin => Box::<RoundRobin>::default(),
        MultipathScheduler::Redundant => Box::new(Redundant),
    }
}

#[cfg(test)]
pub(crate) fn candidate(path_id: u32, srtt_ms: u64) -> Candidate {
    Candidate {
        path_id,
        srtt: Duration::from_millis(srtt_ms),
        validated: true,
        window_open: true,
        pacer_ready: true,
        backup: false,
        pto_count: 0,
        bytes_in_flight: 0,
        cwnd: 12_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<'a>(it: impl Iterator<Item = &'a Candidate>) -> Vec<u32> {
        it.map(|c| c.path_id).collect()
    }

    #[test]
    fn backup_paths_are_eligible_only_when_no_available_path_is_usable() {
        let mut c = [candidate(0, 10), candidate(1, 50), candidate(2, 5)];
        c[2].backup = true;
        assert_eq!(ids(eligible(&c)), [0, 1]);
        // Blocked by their windows, the available paths are still usable.
        c[0].window_open = false;
        c[1].pacer_ready = false;
        assert_eq!(ids(eligible(&c)), [0, 1]);
        // Unvalidated and failed: the backup path takes over.
        c[0].validated = false;
        c[1].pto_count = FAILED_AFTER_PTOS;
        assert_eq!(ids(eligible(&c)), [2]);
        // Every validated path failed: they all may send, backup or not.
        c[2].pto_count = FAILED_AFTER_PTOS + 3;
        assert_eq!(ids(eligible(&c)), [1, 2]);
        // One PTO is not a failure.
        c[1].pto_count = FAILED_AFTER_PTOS - 1;
        assert_eq!(ids(eligible(&c)), [1]);
    }

    #[test]
    fn all_backup_paths_give_no_guidance() {
        let mut c = [candidate(0, 10), candidate(1, 50)];
        c[0].backup = true;
        c[1].backup = true;
        assert_eq!(ids(eligible(&c)), [0, 1]);
        c[1].validated = false;
        assert_eq!(ids(eligible(&c)), [0]);
        assert_eq!(ids(eligible(&[])), Vec::<u32>::new());
    }

    #[test]
    fn build_makes_the_named_scheduler() {
        let c = [candidate(0, 50), candidate(1, 10)];
        let mut rr = build(MultipathScheduler::RoundRobin);
        assert_eq!(rr.pick(&c), Some(0));
        rr.on_sent(0);
        assert_eq!(rr.pick(&c), Some(1));
        assert_eq!(build(MultipathScheduler::MinRtt).pick(&c), Some(1));
    }
}
