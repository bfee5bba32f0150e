//! The redundant scheduler (`multipath.scheduler = "redundant"`,
//! `src/multipath_sched/redundant.rs`, draft-ietf-quic-multipath §5.5, §3.3) with the
//! in-memory pair: the client uploads over path 0 (its first address) and path 1 (its
//! second), 10 ms one way each (20 ms RTT); every packet of stream data goes on both.

use crate::misbehaving::{run_for, DELAY};
use crate::multipath::payload;
use crate::multipath_sched::{count_stream_datagrams, per_path, two_paths_rtts};

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Dir, MultipathScheduler, MAX_COPIES_PER_PATH};
use std::time::Duration;

/// One upload's record: when it ended, its longest time without delivery after
/// `from_round` (what the server read grew), and the most copies queued at once.
struct Upload {
    got: Vec<u8>,
    elapsed: Duration,
    longest_stall: Duration,
    most_copies: usize,
}

/// The client writes `data` on a new stream; `step(pair, round)` runs every round (5
/// ms); delivery gaps are measured from round `from_round` on.
fn upload_timed(
    p: &mut Pair,
    data: &[u8],
    from_round: usize,
    mut step: impl FnMut(&mut Pair, usize),
) -> Upload {
    let start = p.now;
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let (mut written, mut got, mut sid) = (0, Vec::new(), None);
    let (mut last_delivery, mut longest_stall, mut most_copies) = (None, Duration::ZERO, 0);
    for round in 0..4000 {
        step(p, round);
        if written < data.len() {
            written += p.client_conn().write(id, &data[written..]).unwrap_or(0);
            if written == data.len() {
                p.client_conn().finish(id).unwrap();
            }
        }
        run_for(p, DELAY / 2);
        most_copies = most_copies.max(p.client_conn().footprint().multipath_copies);
        let now = p.now;
        let s = p.server_conn().unwrap();
        if sid.is_none() {
            sid = s.accept_stream(Dir::Uni);
        }
        let Some(sid) = sid else { continue };
        let before = got.len();
        let done = drain_stream(s, sid, &mut got);
        if round >= from_round {
            let since = last_delivery.unwrap_or(now);
            if got.len() > before || done {
                longest_stall = longest_stall.max(now.saturating_duration_since(since));
                last_delivery = Some(now);
            } else if last_delivery.is_none() {
                last_delivery = Some(now);
            }
        }
        if done {
            break;
        }
    }
    if let Some(last) = last_delivery.filter(|_| got.len() < data.len()) {
        // Unfinished: the time since the last delivery is a stall too.
        longest_stall = longest_stall.max(p.now.saturating_duration_since(last));
    }
    Upload {
        got,
        elapsed: p.now.saturating_duration_since(start),
        longest_stall,
        most_copies,
    }
}

/// Path 0 drops everything the client sends on it from round 20 (100 ms, mid-upload)
/// on. With the redundant scheduler what was in flight on path 0 also left on path 1,
/// so delivery never stalls longer than about one RTT of path 1 (20 ms; 5 ms rounds);
/// the min_rtt scheduler, the control, waits for path 0's PTOs (its flight is never
/// declared lost: no ACK comes on path 0; each PTO repeats two packets' data on path
/// 1). The copy queues stay under their bound; the redundant upload is byte-exact.
#[test]
fn a_dead_path_does_not_stall_a_redundant_upload() {
    let mut stalls = Vec::new();
    for scheduler in [MultipathScheduler::Redundant, MultipathScheduler::MinRtt] {
        let mut p = two_paths_rtts(scheduler, Duration::ZERO, Duration::ZERO, 90);
        let first = p.client_addr;
        let data = payload();
        let up = upload_timed(&mut p, &data, 20, |p, round| {
            if round == 20 {
                p.drop_filter = Some(Box::new(move |_, from, _, _| from == first));
            }
        });
        let complete = up.got == data;
        assert!(complete || scheduler == MultipathScheduler::MinRtt);
        assert!(
            up.most_copies <= 2 * MAX_COPIES_PER_PATH,
            "{}",
            up.most_copies
        );
        stalls.push((scheduler, up.longest_stall, up.elapsed, complete));
    }
    let (_, redundant, _, _) = stalls[0];
    let (_, min_rtt, _, _) = stalls[1];
    eprintln!("longest stall after path 0 died: {stalls:?}");
    assert!(
        redundant <= Duration::from_millis(25),
        "redundant: {redundant:?} (min_rtt {min_rtt:?})"
    );
    assert!(min_rtt > redundant, "the control stalls longer: {stalls:?}");
}

/// Two working paths of equal RTT: each carries about the same number of stream
/// datagrams (every packet goes on both: path 1's copies spend its window), nearly
/// all the data is copied, nothing is retransmitted (no copy was lost; whichever copy
/// is acknowledged first acknowledges the data), and no copy is left queued.
#[test]
fn two_working_paths_carry_the_same_packets() {
    let mut p = two_paths_rtts(
        MultipathScheduler::Redundant,
        Duration::ZERO,
        Duration::ZERO,
        91,
    );
    let counts = count_stream_datagrams(&mut p);
    let data = payload();
    let up = upload_timed(&mut p, &data, 0, |_, _| {});
    assert!(up.got == data, "byte-exact");
    let (on0, on1) = per_path(&p, &counts);
    eprintln!("path 0 {on0}, path 1 {on1}, {:?}", up.elapsed);
    assert!(on0 >= 700 && on1 >= 700, "path 0 {on0}, path 1 {on1}");
    assert!(
        on0.abs_diff(on1) * 10 <= on0.max(on1),
        "path 0 {on0}, path 1 {on1}"
    );
    let c = p.client_conn();
    let copied = c.stream_bytes_copied();
    assert!(copied >= 900_000, "copied {copied}");
    assert_eq!(c.stream_bytes_retransmitted(), 0);
    assert_eq!(c.footprint().multipath_copies, 0, "no copy left behind");
}
