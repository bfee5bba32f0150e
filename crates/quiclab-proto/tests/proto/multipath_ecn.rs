//! ECN per path on a multipath connection (`src/connection/multipath_ecn.rs`; RFC 9000
//! §13.4.2: "validates the ECN counts for each network path and disables the use of
//! ECN on that path if errors are detected"; draft-ietf-quic-multipath §4.1: PATH_ACK_ECN
//! counts the acknowledged path's space; RFC 9002 §7.1). The client uploads 1 MB round
//! robin over path 0 and path 1 with `ecn = "ect0"` on both sides; only the datagrams
//! from or to the client's second address (path 1) are CE-marked, bleached or re-marked
//! (`Pair::address_ecn`), so whatever happens to path 0 is a leak between the paths.

use crate::misbehaving::{connected_with, DELAY};
use crate::multipath::{config, open_second_path, payload, second_address, upload};

use quiclab_proto::raw::SpaceId;
use quiclab_proto::testing::{EcnImpairment, Pair};
use quiclab_proto::{Ecn, EcnFailure, EcnMode, EcnState, MultipathScheduler};

const DATA: usize = SpaceId::Data as usize;

/// Two validated paths, ECT(0) on both sides, the client's scheduler round robin (so
/// path 1 carries half the upload); `path1` impairs path 1's codepoints from its
/// first datagram (the path's validation included).
fn two_ecn_paths(path1: EcnImpairment, seed: u64) -> Pair {
    let mut c = config(Some(3));
    c.ecn = EcnMode::Ect0;
    c.multipath.scheduler = MultipathScheduler::RoundRobin;
    let mut s = config(Some(3));
    s.ecn = EcnMode::Ect0;
    let mut p = connected_with(c, s, seed);
    p.address_ecn.insert(second_address(), path1);
    open_second_path(&mut p, DELAY * 4, DELAY * 4);
    assert!(p.client_conn().multipath_path_validated(1));
    p
}

/// A few of path 1's datagrams arrive CE-marked: the server counts them in path 1's
/// space and reports them in PATH_ACK_ECN; the client's path 1 takes each CE increase
/// as a congestion event (its controller leaves slow start with a finite ssthresh on
/// links that lose nothing), while path 0 sees no CE and its controller none; both
/// paths stay ECN-capable.
#[test]
fn ce_marks_on_path_1_reduce_path_1s_window_only() {
    let mut p = two_ecn_paths(EcnImpairment::CeOn(vec![40, 41, 42, 150]), 301);
    let data = payload();
    let got = upload(&mut p, &data, |_, _| {});
    assert!(got == data, "byte-exact");
    let sent1 = p.client_conn().multipath_packets(1).unwrap().1;
    let sent0 = p.client_conn().stats().packets_sent[DATA];
    assert!(sent0 > 100 && sent1 > 100, "both paths carried data");
    let server = p.server_conn().unwrap();
    let s1 = server.multipath_path_ecn(1).expect("path 1");
    let s0 = server.multipath_path_ecn(0).expect("path 0");
    assert!(
        s1.received[DATA].ce >= 1,
        "server counted CE on path 1: {s1:?}"
    );
    assert!(s1.received[DATA].ect0 > 100, "{s1:?}");
    assert_eq!(s0.received[DATA].ce, 0, "no CE on path 0: {s0:?}");
    assert!(s0.received[DATA].ect0 > 100, "{s0:?}");
    let c = p.client_conn();
    assert_eq!(c.stats().packets_lost, 0, "a lossless upload");
    let c1 = c.multipath_path_ecn(1).unwrap();
    let c0 = c.multipath_path_ecn(0).unwrap();
    assert_eq!(c1.state, Some(EcnState::Capable), "{c1:?}");
    assert_eq!(c0.state, Some(EcnState::Capable), "{c0:?}");
    assert!(c1.ce_signals >= 1, "path 1's PATH_ACK_ECN grew CE: {c1:?}");
    assert!(c1.peer_reported[DATA].ce >= 1 && c1.peer_reported[DATA].ect0 > 0);
    assert_eq!(c0.ce_signals, 0, "{c0:?}");
    assert_eq!((c0.sending, c1.sending), (Ecn::Ect0, Ecn::Ect0));
    let ss = |id| c.multipath_path_controller(id).unwrap().ssthresh();
    assert!(ss(1) < u64::MAX, "path 1 reduced its window");
    assert_eq!(ss(0), u64::MAX, "path 0 never reduced");
}

/// Path 1 bleaches every codepoint, or re-marks ECT(0) as ECT(1): the client's
/// validation of path 1's counts fails (missing counts; more ECT(1) than sent) and
/// path 1 is sent not-ECT from then on, while path 0 stays capable and ECT(0); the
/// upload completes.
#[test]
fn invalid_counts_on_path_1_disable_ecn_on_path_1_only() {
    let cases = [
        (EcnImpairment::Bleach, EcnFailure::MissingCounts, 302),
        (EcnImpairment::RemarkEct1, EcnFailure::Remarked, 303),
    ];
    for (imp, why, seed) in cases {
        let mut p = two_ecn_paths(imp.clone(), seed);
        let data = payload();
        let got = upload(&mut p, &data, |_, _| {});
        assert!(got == data, "{imp:?}: byte-exact");
        let c = p.client_conn();
        let c1 = c.multipath_path_ecn(1).unwrap();
        let c0 = c.multipath_path_ecn(0).unwrap();
        assert_eq!(c1.state, Some(EcnState::Failed), "{imp:?}: {c1:?}");
        assert_eq!(c1.failure, Some(why), "{imp:?}");
        assert_eq!(c1.sending, Ecn::NotEct, "{imp:?}");
        assert_eq!(c0.state, Some(EcnState::Capable), "{imp:?}: {c0:?}");
        assert_eq!((c0.failure, c0.sending), (None, Ecn::Ect0), "{imp:?}");
        // Path 1's packets after the failure went unmarked: the server counted fewer
        // marked packets on path 1 than it received there.
        let (received, _) = p.server_conn().unwrap().multipath_packets(1).unwrap();
        let s1 = p.server_conn().unwrap().multipath_path_ecn(1).unwrap();
        let marked = s1.received[DATA].ect0 + s1.received[DATA].ect1 + s1.received[DATA].ce;
        assert!(marked < received / 2, "{imp:?}: {marked} of {received}");
    }
}
