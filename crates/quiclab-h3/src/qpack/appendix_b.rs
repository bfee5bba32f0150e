//! RFC 9204 Appendix B, replayed byte for byte through our decoder, and the encoder's
//! side of the same exchange (capacity, acknowledgments, blocking).

use super::{Decoded, Decoder, Encoder, Field};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn f(n: &str, v: &str) -> Field {
    Field::new(n, v)
}

#[test]
fn appendix_b_decoder() {
    // The examples use a maximum capacity of 220 (Set Dynamic Table Capacity=220).
    let mut d = Decoder::new(220, 100, 16 * 1024);

    // B.1 Literal Field Line with Name Reference.
    let r = d
        .decode(0, &hex("0000 510b 2f69 6e64 6578 2e68 746d 6c"))
        .unwrap();
    assert_eq!(r, Decoded::Fields(vec![f(":path", "/index.html")]));
    assert!(d.take_instructions().is_empty());

    // B.2 Dynamic Table: the section arrives before the encoder stream: blocked.
    let section = hex("0381 10 11");
    assert_eq!(d.decode(4, &section).unwrap(), Decoded::Blocked(2));
    assert_eq!(d.blocked_streams(), 1);
    d.on_encoder_stream(&hex(
        "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6dc1 0c2f 7361 6d70 6c65 2f70 6174 68",
    ))
    .unwrap();
    assert_eq!(d.table_size(), 106);
    let r = d.decode(4, &section).unwrap();
    assert_eq!(
        r,
        Decoded::Fields(vec![
            f(":authority", "www.example.com"),
            f(":path", "/sample/path")
        ])
    );
    assert_eq!(d.blocked_streams(), 0);
    assert_eq!(d.take_instructions(), hex("84"));

    // B.3 Speculative Insert.
    d.on_encoder_stream(&hex(
        "4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565",
    ))
    .unwrap();
    assert_eq!(d.table_size(), 160);
    assert_eq!(d.take_instructions(), hex("01"));

    // B.4 Duplicate Instruction, Stream Cancellation.
    d.on_encoder_stream(&hex("02")).unwrap();
    assert_eq!(d.table_size(), 217);
    let r = d.decode(8, &hex("0500 80 c1 81")).unwrap();
    assert_eq!(
        r,
        Decoded::Fields(vec![
            f(":authority", "www.example.com"),
            f(":path", "/"),
            f("custom-key", "custom-value")
        ])
    );
    // (In the RFC the stream is cancelled instead; we decoded it, then cancel anyway.)
    let _ = d.take_instructions();
    d.cancel_stream(8);
    assert_eq!(d.take_instructions(), hex("48"));

    // B.5 Dynamic Table Insert, Eviction.
    d.on_encoder_stream(&hex("810d 6375 7374 6f6d 2d76 616c 7565 32"))
        .unwrap();
    assert_eq!(d.table_size(), 215);
    assert_eq!(d.insert_count(), 5);
}

#[test]
fn appendix_b_encoder_side() {
    let mut e = Encoder::new(220);
    e.on_peer_settings(220, 100);
    let cap = e.take_instructions();
    assert_eq!(cap, hex("3fbd01"));
    let fields = [
        f(":authority", "www.example.com"),
        f(":path", "/sample/path"),
    ];
    let section = e.encode(4, &fields);
    let mut d = Decoder::new(220, 100, 16 * 1024);
    d.on_encoder_stream(&cap).unwrap();
    let enc = e.take_instructions();
    assert!(!enc.is_empty());
    // Decoder-side: blocked until the encoder stream arrives.
    assert!(matches!(
        d.decode(4, &section).unwrap(),
        Decoded::Blocked(_)
    ));
    d.on_encoder_stream(&enc).unwrap();
    assert_eq!(
        d.decode(4, &section).unwrap(),
        Decoded::Fields(fields.to_vec())
    );
    assert_eq!(e.blocking_streams(), 1);
    e.on_decoder_stream(&d.take_instructions()).unwrap();
    assert_eq!(e.blocking_streams(), 0);
    assert_eq!(e.known_received_count(), 2);
    // A repeat is fully indexed: a 2-byte prefix and one byte per field.
    let again = e.encode(8, &fields);
    assert_eq!(again.len(), 4);
    assert!(e.take_instructions().is_empty());
    assert_eq!(
        d.decode(8, &again).unwrap(),
        Decoded::Fields(fields.to_vec())
    );
    // Acknowledging a section twice is a decoder stream error.
    e.on_decoder_stream(&d.take_instructions()).unwrap();
    assert!(e.on_decoder_stream(&hex("88")).is_err());
}

#[test]
fn decoder_rejects_bad_peer_input() {
    let mut d = Decoder::new(220, 1, 1024);
    // Capacity above our maximum.
    assert!(d.on_encoder_stream(&hex("3fbe01")).is_err());
    let mut d = Decoder::new(220, 1, 1024);
    // Duplicate of a missing entry.
    assert!(d.on_encoder_stream(&hex("00")).is_err());
    let mut d = Decoder::new(220, 1, 1024);
    // Static index 99 does not exist.
    assert!(d.decode(0, &hex("0000 ff24")).is_err());
    // Required Insert Count with a zero-capacity decoder.
    let mut z = Decoder::new(0, 0, 1024);
    assert!(z.decode(0, &hex("0200 80")).is_err());
    // Second blocked stream over a limit of one.
    assert!(matches!(
        d.decode(0, &hex("0200 80")),
        Ok(Decoded::Blocked(1))
    ));
    assert!(d.decode(4, &hex("0200 80")).is_err());
}
