//! Replays the committed seed corpora (`seeds/<target>/`) and the inputs of past
//! findings (`regressions/<target>/`) through the targets' logic on stable, so a change
//! that breaks a target or reintroduces a finding fails `cargo test` here too.

use std::fs;
use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = fs::read_dir(Path::new(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.map(|e| e.expect("readable").path()).collect();
        files.sort();
        for f in files {
            let data = fs::read(&f).expect("readable input");
            eprintln!("{}", f.display());
            run(&data);
            n += 1;
        }
    }
    assert!(n > 0, "no inputs for {target}");
}

#[test]
fn endpoint_initial() {
    replay("endpoint_initial", quiclab_fuzz::initial::run);
}

#[test]
fn connection_frames() {
    replay("connection_frames", quiclab_fuzz::frames::run);
}

#[test]
fn h3_connection() {
    replay("h3_connection", quiclab_fuzz::h3::run);
}

#[test]
fn tcp_segments() {
    replay("tcp_segments", quiclab_fuzz::tcp::run);
}

#[test]
fn qpack() {
    replay("qpack", quiclab_fuzz::qpack::run);
}

#[test]
fn h3_frames() {
    replay("h3_frames", quiclab_fuzz::h3_frames::run);
}

#[test]
fn header() {
    replay("header", quiclab_fuzz::wire::header);
}

#[test]
fn frames() {
    replay("frames", quiclab_fuzz::wire::frames);
}

#[test]
fn transport_params() {
    replay("transport_params", quiclab_fuzz::wire::transport_params);
}

/// The replayed server reaches the recorded server's state exactly (the targets rely
/// on it to skip the client's half of each handshake).
#[test]
fn a_replayed_handshake_matches_the_recording() {
    quiclab_fuzz::quic::with_recorded(|config, recorded| {
        let replayed = recorded.replay(config);
        let state = |p: &quiclab_proto::testing::Pair| {
            let c = p
                .server
                .connection(p.server_conn.expect("accepted"))
                .expect("held");
            assert!(c.is_handshake_confirmed());
            format!("{:?} {:?} {:?}", c.stats(), c.footprint(), c.poll_timeout())
        };
        assert_eq!(state(&replayed), state(&recorded.client));
    });
}
