//! The round-robin scheduler: each packet of new stream data goes on the next eligible
//! path (§3.3, [`super::eligible`]) whose window and pacer let a packet go, in path ID
//! order after the path that carried the last one, wrapping around. A path whose
//! window is full is skipped, not waited for.

use super::{eligible, Candidate, PacketScheduler};

/// Path after path, from the one last used.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    /// The path that carried the last packet of stream data.
    last: Option<u32>,
}

impl PacketScheduler for RoundRobin {
    fn pick(&self, candidates: &[Candidate]) -> Option<u32> {
        let mut first = None;
        let mut next = None;
        for c in eligible(candidates).filter(|c| c.can_send()) {
            first = Some(first.map_or(c.path_id, |f: u32| f.min(c.path_id)));
            if self.last.is_none_or(|l| c.path_id > l) {
                next = Some(next.map_or(c.path_id, |n: u32| n.min(c.path_id)));
            }
        }
        next.or(first)
    }

    fn on_sent(&mut self, path_id: u32) {
        self.last = Some(path_id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::candidate;
    use super::*;

    /// Sends `n` packets; how many went on each of paths 0..3.
    fn counts(rr: &mut RoundRobin, c: &[Candidate], n: usize) -> [usize; 3] {
        let mut out = [0; 3];
        for _ in 0..n {
            let p = rr.pick(c).unwrap();
            rr.on_sent(p);
            out[p as usize] += 1;
        }
        out
    }

    #[test]
    fn alternates_whatever_the_rtts() {
        let mut rr = RoundRobin::default();
        let c = [candidate(0, 80), candidate(1, 10), candidate(2, 30)];
        assert_eq!(counts(&mut rr, &c, 9), [3, 3, 3]);
        assert_eq!(counts(&mut rr, &c[..2], 7), [4, 3, 0]);
    }

    #[test]
    fn skips_blocked_paths_and_wraps() {
        let mut rr = RoundRobin::default();
        let mut c = [candidate(0, 10), candidate(1, 10), candidate(2, 10)];
        rr.on_sent(0);
        c[1].window_open = false;
        assert_eq!(rr.pick(&c), Some(2));
        rr.on_sent(2);
        assert_eq!(rr.pick(&c), Some(0), "wraps around");
        c[0].pacer_ready = false;
        c[2].window_open = false;
        assert_eq!(rr.pick(&c), None);
    }

    #[test]
    fn backup_paths_only_when_no_available_path_is_usable() {
        let mut rr = RoundRobin::default();
        let mut c = [candidate(0, 10), candidate(1, 10)];
        c[1].backup = true;
        assert_eq!(counts(&mut rr, &c, 4), [4, 0, 0]);
        c[0].pto_count = super::super::FAILED_AFTER_PTOS;
        assert_eq!(counts(&mut rr, &c, 4), [0, 4, 0]);
    }
}
