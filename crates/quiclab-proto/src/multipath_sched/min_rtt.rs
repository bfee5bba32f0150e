//! The minimum-RTT scheduler (the default): each packet of new stream data goes on the
//! eligible path (§3.3, [`super::eligible`]) with the lowest smoothed RTT among those
//! whose congestion window and pacer let a packet go now; ties go to the lower path
//! ID. When the fastest path's window is full the next fastest open one is used, so
//! every open window fills; when none is open nothing is sent (the data waits for a
//! window, never for a backup path while an available path is usable).

use super::{eligible, Candidate, PacketScheduler};

/// Lowest smoothed RTT first.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinRtt;

impl PacketScheduler for MinRtt {
    fn pick(&self, candidates: &[Candidate]) -> Option<u32> {
        eligible(candidates)
            .filter(|c| c.can_send())
            .min_by_key(|c| (c.srtt, c.path_id))
            .map(|c| c.path_id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::candidate;
    use super::*;

    #[test]
    fn lowest_rtt_path_with_an_open_window() {
        let mut c = [candidate(0, 60), candidate(1, 10), candidate(2, 30)];
        assert_eq!(MinRtt.pick(&c), Some(1));
        c[1].window_open = false;
        assert_eq!(MinRtt.pick(&c), Some(2));
        c[2].pacer_ready = false;
        assert_eq!(MinRtt.pick(&c), Some(0));
        c[0].window_open = false;
        assert_eq!(MinRtt.pick(&c), None, "every window closed: wait");
    }

    #[test]
    fn equal_rtts_go_to_the_lower_path_id() {
        let c = [candidate(0, 20), candidate(1, 20)];
        assert_eq!(MinRtt.pick(&c), Some(0));
    }

    #[test]
    fn a_faster_backup_path_waits_while_an_available_path_is_usable() {
        let mut c = [candidate(0, 60), candidate(1, 10)];
        c[1].backup = true;
        assert_eq!(MinRtt.pick(&c), Some(0));
        c[0].window_open = false;
        assert_eq!(MinRtt.pick(&c), None, "cwnd-blocked is not unusable");
        c[0].validated = false;
        assert_eq!(MinRtt.pick(&c), Some(1));
    }

    #[test]
    fn a_failed_path_is_avoided_unless_every_path_failed() {
        let mut c = [candidate(0, 10), candidate(1, 60)];
        c[0].pto_count = super::super::FAILED_AFTER_PTOS;
        assert_eq!(MinRtt.pick(&c), Some(1));
        c[1].pto_count = super::super::FAILED_AFTER_PTOS;
        assert_eq!(MinRtt.pick(&c), Some(0), "all failed: as without multipath");
    }

    #[test]
    fn unvalidated_paths_carry_no_stream_data() {
        let mut c = [candidate(0, 60), candidate(1, 10)];
        c[1].validated = false;
        assert_eq!(MinRtt.pick(&c), Some(0));
    }
}
