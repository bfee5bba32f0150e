//! Packet headers from arbitrary datagrams: never panic, and what parses is consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiclab_proto::wire::header::{parse_header, parse_version_negotiation};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the local short-header CID length (0..=20, sometimes invalid).
    let Some((&sel, datagram)) = data.split_first() else {
        return;
    };
    let cid_len = usize::from(sel % 24);
    if let Ok(h) = parse_header(datagram, cid_len) {
        assert!(h.pn_offset <= h.packet_len);
        assert!(h.packet_len <= datagram.len());
        assert!(h.dcid.len() <= 20 && h.scid.len() <= 20);
    }
    let _ = parse_version_negotiation(datagram);
});
