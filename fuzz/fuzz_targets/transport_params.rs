//! Transport parameters: decoding never panics for either side, and a valid set
//! re-encodes to bytes that decode to the same set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiclab_proto::wire::{Side, TransportParameters};

fuzz_target!(|data: &[u8]| {
    for side in [Side::Client, Side::Server] {
        if let Ok(tp) = TransportParameters::decode(data, side) {
            let mut buf = Vec::new();
            tp.encode(&mut buf);
            let again = TransportParameters::decode(&buf, side).expect("re-encoded must decode");
            assert_eq!(again, tp);
        }
    }
});
