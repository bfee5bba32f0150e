//! A PATH_CHALLENGE flood (RFC 9000 §8.2.2): no error, and bounded answers. An
//! endpoint echoes each challenge once in a PATH_RESPONSE and "MUST NOT send more
//! than one PATH_RESPONSE frame in response to one PATH_CHALLENGE frame"; it may
//! answer only some (the sender repeats challenges as it needs). We keep the newest
//! 16 waiting, so a flood costs a fixed queue and at most 16 answers per burst, while
//! challenges at a normal pace are all answered.

use crate::misbehaving;

use misbehaving::{connected, run_for, send};
use quiclab_proto::events::{Event, EventSink, FrameKind};
use quiclab_proto::raw::{Frame, SpaceId};
use quiclab_proto::testing::Pair;
use quiclab_proto::{Instant, Side};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most PATH_RESPONSE frames the victim keeps waiting.
const QUEUE: usize = 16;

/// Collects the data of every PATH_RESPONSE the victim sends.
struct Responses(Arc<Mutex<Vec<[u8; 8]>>>);

impl EventSink for Responses {
    fn event(&mut self, _now: Instant, event: &Event) {
        if let Event::PacketSent { frames, .. } = event {
            let mut sent = self.0.lock().unwrap();
            for f in frames {
                if let FrameKind::PathResponse(d) = f.kind {
                    sent.push(d);
                }
            }
        }
    }
}

/// A connected pair whose server logs its PATH_RESPONSE frames into the result.
fn watched(seed: u64) -> (Pair, Arc<Mutex<Vec<[u8; 8]>>>) {
    let mut p = connected(seed);
    let sent = Arc::new(Mutex::new(Vec::new()));
    let now = p.now;
    let sink = Box::new(Responses(sent.clone()));
    p.server_conn().unwrap().set_event_sink(now, sink);
    (p, sent)
}

fn challenge(i: u64) -> Frame<'static> {
    Frame::PathChallenge(i.to_be_bytes())
}

/// 4000 challenges arriving together: the victim stays open, keeps at most 16 and
/// answers exactly the newest 16, each once.
#[test]
fn a_flood_gets_the_newest_sixteen_answers() {
    let (mut p, sent) = watched(1);
    let (packets, per_packet) = (100u64, 40u64);
    for k in 0..packets {
        let frames: Vec<Frame<'_>> = (0..per_packet)
            .map(|j| challenge(k * per_packet + j))
            .collect();
        send(&mut p, Side::Client, SpaceId::Data, &frames);
    }
    run_for(&mut p, Duration::from_millis(200));
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(s.footprint().path_responses, 0, "all sent");
    let mut answered: Vec<u64> = sent
        .lock()
        .unwrap()
        .iter()
        .map(|d| u64::from_be_bytes(*d))
        .collect();
    answered.sort_unstable();
    let total = packets * per_packet;
    let newest: Vec<u64> = (total - QUEUE as u64..total).collect();
    assert_eq!(answered, newest);
}

/// Challenges at a pace (one per 20 ms) are each answered once: the bound only
/// drops challenges of a burst larger than the queue.
#[test]
fn paced_challenges_are_all_answered() {
    let (mut p, sent) = watched(2);
    for i in 0..50 {
        send(&mut p, Side::Client, SpaceId::Data, &[challenge(i)]);
        run_for(&mut p, Duration::from_millis(20));
        assert!(p.server_conn().unwrap().footprint().path_responses <= 1);
    }
    run_for(&mut p, Duration::from_millis(100));
    let answered: Vec<u64> = sent
        .lock()
        .unwrap()
        .iter()
        .map(|d| u64::from_be_bytes(*d))
        .collect();
    assert_eq!(answered, (0..50).collect::<Vec<_>>());
    assert!(!p.server_conn().unwrap().is_closed());
}
