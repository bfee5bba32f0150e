//! A misbehaving HTTP/3 peer for the misbehave_* tests: one side of quiclab-proto's
//! pair runs an [`H3Connection`] (the victim); the other runs no HTTP/3 at all and
//! writes whatever bytes a test gives it on QUIC streams (a control stream with
//! SETTINGS first, so the victim takes it for a peer, then frames where they do not
//! belong). The victim must close the QUIC connection with the RFC's application
//! error code, which the raw side receives in its CONNECTION_CLOSE.

#![allow(dead_code)]

use quiclab_h3::frame::{self, Frame};
use quiclab_h3::{stream_type, H3Config, H3Connection, H3Event};
use quiclab_proto::events::Owner;
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{varint, CloseReason, Connection, Dir, Side, StreamId, TransportConfig};
use std::time::Duration;

pub struct RawPeer {
    pub pair: Pair,
    /// The victim's HTTP/3 connection, on side `victim`.
    pub h3: H3Connection,
    pub victim: Side,
    pub events: Vec<H3Event>,
    /// The raw side's control stream, once opened.
    control: Option<StreamId>,
}

impl RawPeer {
    /// A pair over 5 ms links, handshake done, the victim's HTTP/3 streams open and
    /// the raw side's control stream (type and SETTINGS) read by the victim.
    pub fn new(victim: Side, config: H3Config, seed: u64) -> Self {
        let link = LinkConfig::delay(Duration::from_millis(5));
        let pair = Pair::new(
            TransportConfig::default(),
            TransportConfig::default(),
            [link.clone(), link],
            seed,
        );
        let mut p = RawPeer {
            pair,
            h3: H3Connection::new(victim, config),
            victim,
            events: Vec::new(),
            control: None,
        };
        assert!(p.run(|p| {
            p.pair
                .server_conn()
                .is_some_and(|s| s.is_handshake_complete())
                && p.pair.client_conn().is_handshake_complete()
        }));
        let mut settings = vec![];
        varint::write(&mut settings, stream_type::CONTROL);
        frame::encode(&mut settings, &Frame::Settings(Default::default()));
        let id = p.open(Dir::Uni, &settings);
        p.control = Some(id);
        assert!(p.run(|p| p.h3.peer_settings().is_some()), "SETTINGS read");
        p
    }

    /// The raw side's QUIC connection.
    pub fn raw(&mut self) -> &mut Connection {
        match self.victim {
            Side::Server => self.pair.client_conn(),
            Side::Client => self.pair.server_conn().expect("server connection"),
        }
    }

    /// The victim's QUIC connection.
    pub fn victim_conn(&mut self) -> Option<&mut Connection> {
        match self.victim {
            Side::Server => self.pair.server_conn(),
            Side::Client => Some(self.pair.client_conn()),
        }
    }

    /// Opens a stream on the raw side and writes `bytes` on it.
    pub fn open(&mut self, dir: Dir, bytes: &[u8]) -> StreamId {
        let id = self.raw().open_stream(dir).expect("stream credit");
        self.write(id, bytes);
        id
    }

    /// Writes `bytes` on the raw side's stream `id` (all of them).
    pub fn write(&mut self, id: StreamId, bytes: &[u8]) {
        let n = self.raw().write(id, bytes).expect("writable");
        assert_eq!(n, bytes.len(), "the stream took everything");
    }

    /// Writes `bytes` on the raw side's control stream, after its SETTINGS.
    pub fn control(&mut self, bytes: &[u8]) {
        let id = self.control.expect("control stream");
        self.write(id, bytes);
    }

    /// Feeds the victim's QUIC events to its HTTP/3 connection.
    fn pump(&mut self) {
        let now = self.pair.now;
        let (h3, events) = (&mut self.h3, &mut self.events);
        let conn = match self.victim {
            Side::Server => self.pair.server_conn(),
            Side::Client => Some(self.pair.client_conn()),
        };
        if let Some(conn) = conn {
            while let Some(ev) = conn.poll_event() {
                h3.handle_event(conn, now, &ev);
            }
            h3.poll(conn, now);
        }
        while let Some(ev) = h3.poll_event() {
            events.push(ev);
        }
    }

    /// Runs the pair (pumping the victim after every step) until `done`, for at most
    /// 10 s of virtual time.
    pub fn run(&mut self, mut done: impl FnMut(&mut RawPeer) -> bool) -> bool {
        let limit = self.pair.now + Duration::from_secs(10);
        loop {
            self.pump();
            if done(self) {
                return true;
            }
            if self.pair.now > limit || !self.pair.step() {
                return false;
            }
        }
    }

    /// The victim fails with HTTP/3 error `code`, closes its QUIC connection with it
    /// (RFC 9114 §8: connection errors close the connection with the error code), and
    /// the raw side receives that CONNECTION_CLOSE.
    pub fn expect_close(&mut self, code: u64) {
        let heard = self.run(|p| p.raw().close_reason().is_some());
        let error = self.h3.error().cloned();
        assert!(
            heard,
            "no CONNECTION_CLOSE reached the raw side; victim: {error:?}"
        );
        assert_eq!(error.as_ref().map(|e| e.code), Some(code), "{error:?}");
        assert!(self
            .events
            .contains(&H3Event::ConnectionError(error.unwrap())));
        assert!(self.victim_conn().unwrap().is_closed());
        match self.raw().close_reason() {
            Some(CloseReason::Application {
                owner: Owner::Remote,
                code: c,
                ..
            }) => assert_eq!(*c, code),
            other => panic!("the raw side heard {other:?}, expected application code {code:#x}"),
        }
    }
}
