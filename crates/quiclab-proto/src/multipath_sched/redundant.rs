//! The redundant scheduler: every packet of stream data goes on every eligible path
//! (§3.3, [`super::eligible`]). The packet itself leaves on the path [`super::MinRtt`]
//! would pick (the lowest smoothed RTT among those whose window and pacer let a packet
//! go now); [`copy_targets`] names the other eligible paths, each of which sends a copy
//! of its stream data once its own window and pacer allow (the connection's bounded
//! per-path queue, `connection/multipath_copies.rs`). A full window on one path never
//! holds back the others: its copies wait or are dropped, oldest first.
//!
//! Backup paths get no copies while an available path is usable: §3.3 says of
//! PATH_STATUS_BACKUP that "no traffic should be sent on that path if another path is
//! available and usable", and §5.6 calls duplicating frames on several paths "not
//! recommended for general purpose use due to the network overhead". A peer (or we)
//! that wants a standby path carrying copies leaves it available; a backup path takes
//! over (and gets the copies) only once no available path is usable, as under every
//! scheduler. The draft leaves scheduling to the sender (§5.5).

use super::{eligible, Candidate, MinRtt, PacketScheduler};

/// The packet on the fastest open path, a copy on every other eligible path.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redundant;

impl PacketScheduler for Redundant {
    fn pick(&self, candidates: &[Candidate]) -> Option<u32> {
        MinRtt.pick(candidates)
    }

    fn copies(&self) -> bool {
        true
    }
}

/// The paths that get a copy of a packet of stream data sent on `sent_on`: every
/// eligible path but that one, whether or not its window is open now (a copy waits
/// for it). In path ID order.
pub fn copy_targets(candidates: &[Candidate], sent_on: u32) -> impl Iterator<Item = u32> + '_ {
    eligible(candidates)
        .map(|c| c.path_id)
        .filter(move |id| *id != sent_on)
}

#[cfg(test)]
mod tests {
    use super::super::{candidate, FAILED_AFTER_PTOS};
    use super::*;

    fn targets(c: &[Candidate], sent_on: u32) -> Vec<u32> {
        copy_targets(c, sent_on).collect()
    }

    #[test]
    fn the_packet_goes_on_the_fastest_open_path_and_copies_on_the_others() {
        let mut c = [candidate(0, 60), candidate(1, 10), candidate(2, 30)];
        assert_eq!(Redundant.pick(&c), Some(1));
        assert_eq!(targets(&c, 1), [0, 2]);
        // A closed window moves the packet, not the copies' targets.
        c[1].window_open = false;
        assert_eq!(Redundant.pick(&c), Some(2));
        assert_eq!(targets(&c, 2), [0, 1]);
        assert!(Redundant.copies());
        assert!(!MinRtt.copies());
    }

    #[test]
    fn backup_and_failed_paths_get_no_copies_while_an_available_path_is_usable() {
        let mut c = [candidate(0, 30), candidate(1, 70), candidate(2, 20)];
        c[1].backup = true;
        assert_eq!(targets(&c, 0), [2]);
        c[2].pto_count = FAILED_AFTER_PTOS;
        assert_eq!(targets(&c, 0), Vec::<u32>::new());
        // Path 0 failed as well: the backup path is the only usable one.
        c[0].pto_count = FAILED_AFTER_PTOS;
        assert_eq!(Redundant.pick(&c), Some(1));
        assert_eq!(targets(&c, 1), Vec::<u32>::new());
        c[1].backup = false;
        c[0].pto_count = 0;
        assert_eq!(targets(&c, 0), [1]);
    }
}
