//! The file writer: contents as a direct write, many files, a bounded queue, drop order.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quiclab-fw-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Records of varied sizes, as a qlog writer's `write_all` calls (some past a chunk).
fn records(seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed | 1;
    (0..400)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = if i % 97 == 0 {
                FILE_CHUNK + 17
            } else {
                (x % 700) as usize
            };
            (0..len)
                .map(|j| b'a' + ((j as u64 + x) % 26) as u8)
                .collect()
        })
        .collect()
}

/// The bytes through a sink are the bytes `std::fs::write` gives, flushes and all.
#[test]
fn contents_match_a_direct_write() {
    let d = dir("same");
    let recs = records(7);
    let direct: Vec<u8> = recs.concat();
    std::fs::write(d.join("direct"), &direct).unwrap();
    let w = FileWriter::spawn("test").unwrap();
    let mut sink = w.create(d.join("sink"));
    for (i, r) in recs.iter().enumerate() {
        sink.write_all(r).unwrap();
        if i % 50 == 0 {
            sink.flush().unwrap();
        }
    }
    drop(sink);
    drop(w);
    assert_eq!(
        std::fs::read(d.join("sink")).unwrap(),
        std::fs::read(d.join("direct")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Many sinks interleaved on one thread, some from other threads: each file gets its
/// own bytes in order; `send` and `adopt` (the key log's way) append whole lines.
#[test]
fn many_sinks_and_files() {
    let d = dir("many");
    let w = FileWriter::spawn("test").unwrap();
    let mut sinks: Vec<_> = (0..40).map(|i| w.create(d.join(format!("{i}")))).collect();
    let recs: Vec<_> = (0..40).map(|i| records(i + 1)).collect();
    // Record k of every file, then record k + 1: the files' chunks interleave.
    for k in 0..400 {
        for (s, r) in sinks.iter_mut().zip(&recs) {
            s.write_all(&r[k]).unwrap();
        }
    }
    let threads: Vec<_> = sinks
        .drain(20..)
        .map(|s| std::thread::spawn(move || drop(s)))
        .collect();
    drop(sinks);
    for t in threads {
        t.join().unwrap();
    }
    let log = std::fs::File::create(d.join("keys")).unwrap();
    let keys = Arc::new(w.adopt(d.join("keys"), log));
    let lines: Vec<_> = (0..4)
        .map(|t| {
            let keys = keys.clone();
            std::thread::spawn(move || {
                for n in 0..100 {
                    keys.send(format!("line {t} {n}\n").into_bytes());
                }
            })
        })
        .collect();
    for t in lines {
        t.join().unwrap();
    }
    drop(keys);
    drop(w);
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(
            std::fs::read(d.join(format!("{i}"))).unwrap(),
            r.concat(),
            "{i}"
        );
    }
    let keys = std::fs::read_to_string(d.join("keys")).unwrap();
    assert_eq!(keys.lines().count(), 400);
    for t in 0..4 {
        let mine: Vec<_> = keys
            .lines()
            .filter(|l| l.starts_with(&format!("line {t} ")))
            .collect();
        let want: Vec<_> = (0..100).map(|n| format!("line {t} {n}")).collect();
        assert_eq!(mine, want);
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// While the thread is stalled (a slow disk), a writer's sender waits once the queue
/// is full instead of queueing without bound; released, everything lands.
#[test]
fn a_full_queue_blocks_the_sender() {
    let d = dir("bounded");
    let w = FileWriter::spawn("test").unwrap();
    let release = w.stall();
    let mut sink = w.create(d.join("f"));
    let handed = Arc::new(AtomicUsize::new(0));
    let chunks = 10 * QUEUE_DEPTH;
    let producer = {
        let handed = handed.clone();
        std::thread::spawn(move || {
            let chunk = vec![b'x'; FILE_CHUNK];
            for _ in 0..chunks {
                sink.write_all(&chunk).unwrap();
                handed.fetch_add(1, Ordering::SeqCst);
            }
            drop(sink);
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    // The Create and QUEUE_DEPTH - 1 chunks fill the queue; the next write waits.
    let seen = handed.load(Ordering::SeqCst);
    assert!(
        seen < QUEUE_DEPTH,
        "{seen} chunks queued behind a stalled writer"
    );
    drop(release);
    producer.join().unwrap();
    drop(w);
    assert_eq!(
        std::fs::metadata(d.join("f")).unwrap().len(),
        (chunks * FILE_CHUNK) as u64
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Whichever goes last (the writer handle or a sink, as connections inside an
/// endpoint may outlive the `QlogDir`), dropping it joins the thread with every byte
/// written; a file that cannot be created costs nothing but its bytes.
#[test]
fn drop_order_and_failures() {
    let d = dir("order");
    // The handle first, the sink later (from another thread).
    let w = FileWriter::spawn("test").unwrap();
    let mut late = w.create(d.join("late"));
    let mut bad = w.create(d.join("no-such-dir").join("f"));
    drop(w);
    late.write_all(b"after the handle\n").unwrap();
    bad.write_all(b"dropped").unwrap();
    drop(bad);
    std::thread::spawn(move || drop(late)).join().unwrap();
    assert_eq!(
        std::fs::read(d.join("late")).unwrap(),
        b"after the handle\n"
    );
    // The sink first, then the handle.
    let w = FileWriter::spawn("test").unwrap();
    let mut early = w.create(d.join("early"));
    early.write_all(b"before the handle\n").unwrap();
    drop(early);
    drop(w);
    assert_eq!(
        std::fs::read(d.join("early")).unwrap(),
        b"before the handle\n"
    );
    assert!(!d.join("no-such-dir").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// A qlog through a sink is byte for byte the qlog written to memory, including the
/// events after the close's flush (the connection's file as `QlogDir` writes it).
#[test]
fn qlog_bytes_as_written_directly() {
    use quiclab_proto::events::{ConnectionState, Event, EventSink, LossTrigger};
    use quiclab_proto::{ConnectionId, Instant, PacketType, QlogWriter, Side};
    let d = dir("qlog");
    let odcid = ConnectionId::new(&[7; 8]).unwrap();
    let events: Vec<Event> = (0..2_000u64)
        .map(|pn| Event::PacketLost {
            ty: PacketType::OneRtt,
            pn,
            trigger: LossTrigger::TimeThreshold,
            path_id: None,
        })
        .chain([
            Event::ConnectionStateUpdated {
                new: ConnectionState::Closing,
            },
            Event::PtoExpired { pto_count: 1 },
        ])
        .collect();
    let mut direct = QlogWriter::new(Vec::new(), "quiclab server", Side::Server, Some(odcid));
    let w = FileWriter::spawn("test").unwrap();
    let file = w.create(d.join("x.sqlog"));
    let mut through = QlogWriter::new(file, "quiclab server", Side::Server, Some(odcid));
    for (i, ev) in events.iter().enumerate() {
        let now = Instant::from_micros(i as u64 * 10);
        direct.event(now, ev);
        through.event(now, ev);
    }
    let direct = direct.into_inner();
    assert!(direct.len() > 2 * FILE_CHUNK, "{} bytes", direct.len());
    drop(through);
    drop(w);
    assert_eq!(std::fs::read(d.join("x.sqlog")).unwrap(), direct);
    let _ = std::fs::remove_dir_all(&d);
}
