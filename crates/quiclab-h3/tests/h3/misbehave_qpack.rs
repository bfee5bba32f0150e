//! QPACK input that refers past the tables or breaks the decoder's limits (RFC 9204):
//! field sections referring to static entries that do not exist, to dynamic entries
//! not inserted, past the Required Insert Count or evicted, or with a Required Insert
//! Count out of range, are QPACK_DECOMPRESSION_FAILED (§2.2, §3.1, §4.5); encoder
//! instructions doing the same, or raising the capacity past ours, are
//! QPACK_ENCODER_STREAM_ERROR (§3.1, §4.3). The dynamic table, the blocked streams and
//! partial instructions stay within what the victim advertised.

use crate::raw_peer;

use quiclab_h3::frame::{self, Frame};
use quiclab_h3::qpack::prefix::{encode_int, encode_string};
use quiclab_h3::{code, stream_type, H3Config};
use quiclab_proto::{varint, Dir, Side, StreamId};
use raw_peer::RawPeer;

/// The victim's SETTINGS_QPACK_MAX_TABLE_CAPACITY and SETTINGS_QPACK_BLOCKED_STREAMS
/// (the defaults).
const CAPACITY: u64 = 4096;
const BLOCKED: usize = 16;

fn victim(seed: u64) -> RawPeer {
    RawPeer::new(Side::Server, H3Config::default(), seed)
}

/// RFC 9204 §4.5.1.1: the encoded Required Insert Count for `ric` inserts.
fn encoded_ric(ric: u64) -> u64 {
    let full_range = 2 * (CAPACITY / 32);
    if ric == 0 {
        0
    } else {
        ric % full_range + 1
    }
}

/// A field section: prefix (encoded Required Insert Count, Base = RIC + `delta`)
/// followed by `lines`.
fn section(encoded_ric: u64, delta: u64, lines: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    encode_int(&mut out, 0x00, 8, encoded_ric);
    encode_int(&mut out, 0x00, 7, delta);
    out.extend_from_slice(lines);
    out
}

/// Field line encodings (RFC 9204 §4.5.2, §4.5.3).
fn indexed_static(index: u64) -> Vec<u8> {
    let mut out = vec![];
    encode_int(&mut out, 0xc0, 6, index);
    out
}
fn indexed_dynamic(relative: u64) -> Vec<u8> {
    let mut out = vec![];
    encode_int(&mut out, 0x80, 6, relative);
    out
}
fn indexed_post_base(index: u64) -> Vec<u8> {
    let mut out = vec![];
    encode_int(&mut out, 0x10, 4, index);
    out
}

/// Sends `block` as the HEADERS of a new request stream.
fn request(p: &mut RawPeer, block: Vec<u8>) -> StreamId {
    let mut b = vec![];
    frame::encode(&mut b, &Frame::Headers(block));
    p.open(Dir::Bi, &b)
}

/// Opens the raw side's encoder stream with these instructions.
fn encoder_stream(p: &mut RawPeer, instructions: &[u8]) -> StreamId {
    let mut b = vec![];
    varint::write(&mut b, stream_type::QPACK_ENCODER);
    b.extend_from_slice(instructions);
    p.open(Dir::Uni, &b)
}

/// Encoder instructions (RFC 9204 §4.3.1, §4.3.3).
fn set_capacity(cap: u64) -> Vec<u8> {
    let mut out = vec![];
    encode_int(&mut out, 0x20, 5, cap);
    out
}
fn insert_literal(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    encode_string(&mut out, 0x40, 5, name);
    encode_string(&mut out, 0x00, 7, value);
    out
}

/// RFC 9204 §3.1: a static index past the 99 entries of Appendix A.
#[test]
fn static_reference_past_the_table() {
    let mut p = victim(1);
    request(&mut p, section(0, 0, &indexed_static(99)));
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
}

/// RFC 9204 §2.2.3, §4.5.2: a dynamic reference in a section whose Required Insert
/// Count is 0 (nothing may be referenced).
#[test]
fn dynamic_reference_with_no_inserts() {
    let mut p = victim(2);
    request(&mut p, section(0, 0, &indexed_dynamic(0)));
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
}

/// RFC 9204 §2.2.3: with one entry inserted and Required Insert Count 1, a post-base
/// reference (absolute index 1) is at the Required Insert Count, and a relative one
/// of index 1 before the table's start.
#[test]
fn references_past_the_inserted_entries() {
    for (seed, line) in [(3, indexed_post_base(0)), (4, indexed_dynamic(1))] {
        let mut p = victim(seed);
        let mut ins = set_capacity(CAPACITY);
        ins.extend(insert_literal(b"x-a", b"1"));
        encoder_stream(&mut p, &ins);
        assert!(p.run(|p| p.h3.qpack().1.insert_count() == 1));
        request(&mut p, section(encoded_ric(1), 0, &line));
        p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
    }
}

/// RFC 9204 §2.2.3: a reference to an entry the table already evicted. A 64-byte
/// table holds one of the 35-byte entries; the second insert evicts the first.
#[test]
fn reference_to_an_evicted_entry() {
    let mut p = victim(5);
    let mut ins = set_capacity(64);
    ins.extend(insert_literal(b"x-a", b"1"));
    ins.extend(insert_literal(b"x-b", b"2"));
    encoder_stream(&mut p, &ins);
    assert!(p.run(|p| p.h3.qpack().1.insert_count() == 2));
    assert!(p.h3.qpack().1.table_size() <= 64);
    // Base 2: relative index 1 is absolute 0, the evicted entry.
    request(&mut p, section(encoded_ric(2), 0, &indexed_dynamic(1)));
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
}

/// RFC 9204 §4.5.1.1: an encoded Required Insert Count above 2 × MaxEntries.
#[test]
fn required_insert_count_out_of_range() {
    let mut p = victim(6);
    let full_range = 2 * (CAPACITY / 32);
    request(&mut p, section(full_range + 1, 0, &indexed_static(17)));
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
}

/// RFC 9204 §2.1.2: sections waiting for inserts that never come block their
/// streams; one more blocked stream than SETTINGS_QPACK_BLOCKED_STREAMS is a
/// QPACK_DECOMPRESSION_FAILED. The victim never holds more than the limit.
#[test]
fn too_many_blocked_streams() {
    let mut p = victim(7);
    for _ in 0..BLOCKED {
        request(&mut p, section(encoded_ric(1), 0, &indexed_dynamic(0)));
    }
    assert!(p.run(|p| p.h3.qpack().1.blocked_streams() == BLOCKED));
    assert!(p.h3.error().is_none());
    request(&mut p, section(encoded_ric(1), 0, &indexed_dynamic(0)));
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
    assert!(p.h3.qpack().1.blocked_streams() <= BLOCKED);
}

/// RFC 9204 §3.1, §4.3.2, §4.3.4: encoder instructions naming a static entry that
/// does not exist, or a dynamic entry not inserted (by name reference or Duplicate).
#[test]
fn encoder_instructions_referring_past_the_tables() {
    let mut static_ref = set_capacity(CAPACITY);
    encode_int(&mut static_ref, 0xc0, 6, 99);
    encode_string(&mut static_ref, 0x00, 7, b"v");
    let mut dynamic_ref = set_capacity(CAPACITY);
    encode_int(&mut dynamic_ref, 0x80, 6, 0);
    encode_string(&mut dynamic_ref, 0x00, 7, b"v");
    let mut duplicate = set_capacity(CAPACITY);
    encode_int(&mut duplicate, 0x00, 5, 0);
    for (seed, ins) in (10..).zip([static_ref, dynamic_ref, duplicate]) {
        let mut p = victim(seed);
        encoder_stream(&mut p, &ins);
        p.expect_close(code::QPACK_ENCODER_STREAM_ERROR);
        assert_eq!(p.h3.qpack().1.insert_count(), 0);
    }
}

/// RFC 9204 §4.3.1: a capacity above our SETTINGS_QPACK_MAX_TABLE_CAPACITY.
#[test]
fn capacity_above_the_maximum() {
    let mut p = victim(20);
    encoder_stream(&mut p, &set_capacity(CAPACITY + 1));
    p.expect_close(code::QPACK_ENCODER_STREAM_ERROR);
}

/// A literal declared 1 MiB long (only its length sent): refused at once, not
/// waited for, since no entry that long fits our table or field section limit.
#[test]
fn a_literal_longer_than_any_section() {
    let mut p = victim(21);
    let mut ins = set_capacity(CAPACITY);
    encode_int(&mut ins, 0x40, 5, 1 << 20);
    encoder_stream(&mut p, &ins);
    p.expect_close(code::QPACK_ENCODER_STREAM_ERROR);
}

/// A flood of valid inserts: the table evicts and stays within the capacity, and the
/// connection stays open.
#[test]
fn an_insert_flood_stays_within_the_capacity() {
    let mut p = victim(22);
    let mut ins = set_capacity(CAPACITY);
    for i in 0..1000u32 {
        ins.extend(insert_literal(b"x-flood", format!("{i:060}").as_bytes()));
    }
    encoder_stream(&mut p, &ins);
    assert!(p.run(|p| p.h3.qpack().1.insert_count() == 1000));
    assert!(p.h3.qpack().1.table_size() as u64 <= CAPACITY);
    assert!(p.h3.error().is_none());
}

/// The same on the client side: a server's response HEADERS naming a static entry
/// that does not exist.
#[test]
fn a_server_response_past_the_static_table() {
    let mut p = RawPeer::new(Side::Client, H3Config::default(), 30);
    let now = p.pair.now;
    let fields = quiclab_h3::message::get_request("localhost", "/", &[]);
    let conn = p.pair.client_conn();
    let id = p.h3.send_request(conn, now, &fields, true).unwrap();
    assert!(p.run(|p| p.raw().accept_stream(Dir::Bi) == Some(id)));
    let mut b = vec![];
    frame::encode(&mut b, &Frame::Headers(section(0, 0, &indexed_static(120))));
    p.write(id, &b);
    p.expect_close(code::QPACK_DECOMPRESSION_FAILED);
}
