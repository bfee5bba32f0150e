//! Shared by the misbehaving-peer tests (`misbehave_*.rs`): one side of a pair sends
//! what the RFCs forbid (through `Pair::send_crafted`), and the other side, the
//! victim, must close with the RFC's error code, in a CONNECTION_CLOSE the sender
//! receives, while its memory stays bounded.

#![allow(dead_code)]

use quiclab_proto::events::Owner;
use quiclab_proto::raw::{Frame, SpaceId};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{CloseReason, Connection, Instant, Side, TransportConfig, TransportErrorCode};
use std::time::Duration;

/// One-way delay of both links.
pub const DELAY: Duration = Duration::from_millis(10);

/// A pair over 10 ms links with these configs, not yet connected.
pub fn pair(client: TransportConfig, server: TransportConfig, seed: u64) -> Pair {
    let link = LinkConfig::delay(DELAY);
    Pair::new(client, server, [link.clone(), link], seed)
}

/// A pair whose handshake is confirmed on both sides.
pub fn connected_with(client: TransportConfig, server: TransportConfig, seed: u64) -> Pair {
    let mut p = pair(client, server, seed);
    p.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
    p
}

/// [`connected_with`] default configs.
pub fn connected(seed: u64) -> Pair {
    connected_with(TransportConfig::default(), TransportConfig::default(), seed)
}

/// The connection of `side`.
pub fn conn(p: &mut Pair, side: Side) -> &mut Connection {
    match side {
        Side::Client => p.client_conn(),
        Side::Server => p.server_conn().expect("server connection"),
    }
}

/// `frames` encoded one after the other.
pub fn encode(frames: &[Frame<'_>]) -> Vec<u8> {
    let mut buf = Vec::new();
    for f in frames {
        f.encode(&mut buf);
    }
    buf
}

/// `from` sends one packet of `space` carrying `frames`.
pub fn send(p: &mut Pair, from: Side, space: SpaceId, frames: &[Frame<'_>]) {
    assert!(
        p.send_crafted(from, space, &encode(frames)),
        "{from:?} has no {space:?} keys"
    );
}

/// Runs the pair until the side opposite `victim` learns of the close, then asserts
/// that the victim closed with `code` naming `frame_type` (RFC 9000 §19.19: the frame
/// that triggered the error, 0 when unknown), that the other side received exactly
/// that in a CONNECTION_CLOSE, and that both sides' state is gone within the closing
/// and draining periods (RFC 9000 §10.2).
pub fn expect_close(p: &mut Pair, victim: Side, code: TransportErrorCode, frame_type: u64) {
    let sender = victim.peer();
    let limit = p.now + Duration::from_secs(10);
    let heard = p.run_until(limit, |p| conn(p, sender).close_reason().is_some());
    let victim_reason = conn(p, victim).close_reason().cloned();
    heard.unwrap_or_else(|e| panic!("no CONNECTION_CLOSE reached {sender:?} ({e}); {victim:?} closed with {victim_reason:?}"));
    match &victim_reason {
        Some(CloseReason::Transport {
            owner: Owner::Local,
            error,
        }) => {
            assert_eq!(error.code, code, "{victim:?}: {error}");
            assert_eq!(
                error.frame_type.unwrap_or(0),
                frame_type,
                "{victim:?}: {error}"
            );
        }
        other => panic!(
            "{victim:?} closed with {other:?}, expected {code}; {sender:?}: {:?}",
            conn(p, sender).close_reason()
        ),
    }
    assert!(conn(p, victim).is_closed());
    match conn(p, sender).close_reason() {
        Some(CloseReason::Transport {
            owner: Owner::Remote,
            error,
        }) => {
            assert_eq!(error.code, code, "{sender:?} received {error}");
            assert_eq!(
                error.frame_type,
                Some(frame_type),
                "{sender:?} received {error}"
            );
        }
        other => panic!("{sender:?} received {other:?}, expected {code}"),
    }
    let limit = p.now + Duration::from_secs(10);
    p.run_until(limit, |p| {
        conn(p, victim).is_drained() && conn(p, sender).is_drained()
    })
    .expect("both sides drain");
}

/// [`expect_close`] for a close the sender cannot hear (sent to a connection ID it
/// made up): the victim closed with `code` naming `frame_type`, sent its
/// CONNECTION_CLOSE, and its state is gone after the closing period.
pub fn expect_unheard_close(p: &mut Pair, victim: Side, code: TransportErrorCode, frame_type: u64) {
    let sent = conn(p, victim).stats().datagrams_sent.packets;
    let limit = p.now + Duration::from_secs(10);
    p.run_until(limit, |p| conn(p, victim).is_drained())
        .expect("the victim drains");
    match conn(p, victim).close_reason() {
        Some(CloseReason::Transport {
            owner: Owner::Local,
            error,
        }) => {
            assert_eq!(error.code, code, "{victim:?}: {error}");
            assert_eq!(
                error.frame_type.unwrap_or(0),
                frame_type,
                "{victim:?}: {error}"
            );
        }
        other => panic!("{victim:?} closed with {other:?}, expected {code}"),
    }
    assert!(
        conn(p, victim).stats().datagrams_sent.packets > sent,
        "CONNECTION_CLOSE sent"
    );
}

/// Runs the pair through every event of the next `d` of virtual time.
pub fn run_for(p: &mut Pair, d: Duration) {
    let until = p.now + d;
    p.flush();
    while p.next_event_time().is_some_and(|t| t <= until) {
        p.step();
    }
    p.now = until;
}
