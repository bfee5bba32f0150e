//! The stateless QUIC wire targets: `header`, `frames` and `transport_params`.

use quiclab_proto::raw::{decode_frames, parse_header, parse_version_negotiation, Frame};
use quiclab_proto::{Side, TransportParameters};

/// `header`: packet headers from arbitrary datagrams never panic, and what parses is
/// consistent. The first byte picks the short-header CID length (0..=23, some invalid).
pub fn header(data: &[u8]) {
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
}

/// `frames`: decoding a payload never panics, and every decoded frame re-encodes
/// (length = `encoded_len`) to bytes that decode to the same frames.
pub fn frames(data: &[u8]) {
    let frames: Vec<Frame<'_>> = decode_frames(data).map_while(Result::ok).collect();
    let mut buf = Vec::new();
    for f in &frames {
        let before = buf.len();
        f.encode(&mut buf);
        assert_eq!(buf.len() - before, f.encoded_len(), "{f:?}");
    }
    let again: Vec<Frame<'_>> = decode_frames(&buf)
        .collect::<Result<_, _>>()
        .expect("re-encoded frames must decode");
    // Decoding merges adjacent PADDING runs; a decoded list never has two in a row.
    assert_eq!(again, frames);
}

/// `transport_params`: decoding never panics for either side, and a valid set
/// re-encodes to bytes that decode to the same set.
pub fn transport_params(data: &[u8]) {
    for side in [Side::Client, Side::Server] {
        if let Ok(tp) = TransportParameters::decode(data, side) {
            let mut buf = Vec::new();
            tp.encode(&mut buf);
            let again = TransportParameters::decode(&buf, side).expect("re-encoded must decode");
            assert_eq!(again, tp);
        }
    }
}
