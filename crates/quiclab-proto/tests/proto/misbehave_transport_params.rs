//! Invalid transport parameters (RFC 9000 §7.3, §7.4, §18.2): the receiver closes the
//! connection with TRANSPORT_PARAMETER_ERROR (naming the CRYPTO frame that carried
//! them), in packets the sender can read mid-handshake, and the handshake never
//! completes. The sender's parameters are rewritten before TLS sends them
//! (`with_tampered_transport_parameters`).

use crate::misbehaving;

use misbehaving::{expect_close, pair, DELAY};
use quiclab_proto::raw::frame_type;
use quiclab_proto::raw::transport_params::id;
use quiclab_proto::testing::{with_tampered_transport_parameters, Pair};
use quiclab_proto::{
    varint, ConnectionId, Instant, Side, TransportConfig, TransportErrorCode as Code,
    TransportParameters,
};

/// Decodes `side`'s parameters, lets `change` alter them, encodes them again.
fn rewrite(
    side: Side,
    change: impl Fn(&mut TransportParameters) + 'static,
) -> impl Fn(&mut Vec<u8>) + 'static {
    move |raw| {
        let mut tp = TransportParameters::decode(raw, side).expect("our own parameters");
        change(&mut tp);
        raw.clear();
        tp.encode(raw);
    }
}

/// Appends one parameter (id, value) to the encoded list.
fn append(pid: u64, value: Vec<u8>) -> impl Fn(&mut Vec<u8>) + 'static {
    move |raw| {
        varint::write(raw, pid);
        varint::write(raw, value.len() as u64);
        raw.extend_from_slice(&value);
    }
}

fn varint_value(v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    varint::write(&mut b, v);
    b
}

/// The server, the victim, reads the client's tampered parameters in the ClientHello.
fn client_sends(seed: u64, edit: impl Fn(&mut Vec<u8>) + 'static) {
    let mut p = with_tampered_transport_parameters(Side::Client, edit, || {
        pair(TransportConfig::default(), TransportConfig::default(), seed)
    });
    expect_close(
        &mut p,
        Side::Server,
        Code::TRANSPORT_PARAMETER_ERROR,
        frame_type::CRYPTO,
    );
    assert!(!p.client_conn().is_handshake_complete());
}

/// The client, the victim, reads the server's tampered parameters in its
/// EncryptedExtensions.
fn server_sends(seed: u64, edit: impl Fn(&mut Vec<u8>) + 'static) {
    let mut p: Pair = pair(TransportConfig::default(), TransportConfig::default(), seed);
    with_tampered_transport_parameters(Side::Server, edit, || {
        p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
            .expect("the ClientHello arrives");
    });
    expect_close(
        &mut p,
        Side::Client,
        Code::TRANSPORT_PARAMETER_ERROR,
        frame_type::CRYPTO,
    );
    assert!(!p.server_conn().unwrap().is_handshake_complete());
}

/// RFC 9000 §18.2: values out of range.
#[test]
fn values_out_of_range() {
    let cases: [fn(&mut TransportParameters); 5] = [
        |tp| tp.max_udp_payload_size = 1199,
        |tp| tp.ack_delay_exponent = 21,
        |tp| tp.max_ack_delay = 1 << 14,
        |tp| tp.active_connection_id_limit = 1,
        |tp| tp.initial_max_streams_bidi = (1 << 60) + 1,
    ];
    for (seed, change) in (1..).zip(cases) {
        client_sends(seed, rewrite(Side::Client, change));
        server_sends(seed + 100, rewrite(Side::Server, change));
    }
}

/// RFC 9000 §18.2: a client sending a parameter only a server may send.
#[test]
fn server_only_parameters_from_a_client() {
    client_sends(10, append(id::STATELESS_RESET_TOKEN, vec![1; 16]));
    client_sends(
        11,
        append(id::ORIGINAL_DESTINATION_CONNECTION_ID, vec![2; 8]),
    );
    client_sends(12, append(id::RETRY_SOURCE_CONNECTION_ID, vec![3; 8]));
}

/// RFC 9000 §7.4: a parameter twice; a list cut in the middle of a parameter.
#[test]
fn duplicate_and_truncated_parameters() {
    client_sends(20, append(id::INITIAL_MAX_DATA, varint_value(1000)));
    server_sends(21, append(id::MAX_IDLE_TIMEOUT, varint_value(1000)));
    client_sends(22, |raw: &mut Vec<u8>| {
        raw.pop();
    });
}

/// RFC 9000 §7.3: initial_source_connection_id missing, or not the Source Connection
/// ID of the peer's Initial packets; original_destination_connection_id (server)
/// missing or not the client's first Destination Connection ID.
#[test]
fn connection_id_parameters_that_do_not_match() {
    let other = ConnectionId::new(&[0xee; 8]).unwrap();
    client_sends(
        30,
        rewrite(Side::Client, |tp| tp.initial_source_connection_id = None),
    );
    client_sends(
        31,
        rewrite(Side::Client, move |tp| {
            tp.initial_source_connection_id = Some(other)
        }),
    );
    server_sends(
        32,
        rewrite(Side::Server, move |tp| {
            tp.initial_source_connection_id = Some(other)
        }),
    );
    server_sends(
        33,
        rewrite(Side::Server, |tp| {
            tp.original_destination_connection_id = None
        }),
    );
    server_sends(
        34,
        rewrite(Side::Server, move |tp| {
            tp.original_destination_connection_id = Some(other)
        }),
    );
}

/// The tampering itself changes nothing when it rewrites the parameters as they
/// were: the handshake completes (so the failures above are the parameters' doing).
#[test]
fn untouched_parameters_connect() {
    let mut p =
        with_tampered_transport_parameters(Side::Client, rewrite(Side::Client, |_| {}), || {
            pair(TransportConfig::default(), TransportConfig::default(), 40)
        });
    with_tampered_transport_parameters(Side::Server, rewrite(Side::Server, |_| {}), || {
        p.run_until(Instant::from_millis(1000), |p| {
            p.client_conn().is_handshake_confirmed()
        })
        .expect("handshake");
    });
}
