//! Unidirectional streams (RFC 9114 §6.2): our control and QPACK encoder/decoder
//! streams, and the peer's, identified by their leading stream type. Control frames
//! (SETTINGS first, GOAWAY, ...) are handled here; QPACK bytes go to the encoder or
//! decoder. Unknown stream types are stopped and ignored; push streams are refused.

use crate::connection::{H3Connection, H3Event};
use crate::error::{code, H3Error};
use crate::frame::{self, Decoded, Frame, FrameDecoder};
use crate::log::{FrameInfo, H3LogEvent, Owner};
use crate::settings::Settings;
use crate::streams::Uni;
use quiclab_proto::varint::{self, Reader};
use quiclab_proto::{Connection, Dir, Instant, Side, StreamError, StreamId};

/// Stream types (RFC 9114 §6.2, RFC 9204 §4.2).
pub mod stream_type {
    pub const CONTROL: u64 = 0x00;
    pub const PUSH: u64 = 0x01;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
}

/// Largest control frame payload we buffer (SETTINGS is the only big one).
const MAX_CONTROL_FRAME: u64 = 4096;

impl H3Connection {
    /// Opens the control stream (with SETTINGS) and the QPACK streams (RFC 9114
    /// §6.2.1, RFC 9204 §4.2) as soon as the connection allows.
    pub(crate) fn open_local(&mut self, conn: &mut Connection, now: Instant) {
        if self.local.control.is_none() && conn.is_handshake_complete() {
            let Some(id) = conn.open_stream(Dir::Uni) else {
                return;
            };
            self.local.control = Some(id);
            let settings = Settings {
                qpack_max_table_capacity: self.config.qpack_max_table_capacity,
                qpack_blocked_streams: self.config.qpack_blocked_streams,
                max_field_section_size: Some(self.config.max_field_section_size),
                unknown: Vec::new(),
            };
            // The control buffer may already hold a GOAWAY: SETTINGS goes first.
            let mut head = Vec::new();
            varint::write(&mut head, stream_type::CONTROL);
            frame::encode(&mut head, &Frame::Settings(settings.clone()));
            head.append(&mut self.local.control_buf);
            self.local.control_buf = head;
            self.log(now, || H3LogEvent::StreamTypeSet {
                owner: Owner::Local,
                stream: id.0,
                stream_type: "control",
            });
            let pairs = settings_pairs(&settings);
            self.log(now, || H3LogEvent::ParametersSet {
                owner: Owner::Local,
                settings: pairs.clone(),
            });
            self.log(now, || H3LogEvent::FrameCreated {
                stream: id.0,
                length: settings.encode().len() as u64,
                frame: FrameInfo::Settings { settings: pairs },
            });
        }
        for (slot, ty, name) in [
            (0, stream_type::QPACK_ENCODER, "qpack_encode"),
            (1, stream_type::QPACK_DECODER, "qpack_decode"),
        ] {
            let cur = if slot == 0 {
                self.local.encoder
            } else {
                self.local.decoder
            };
            if cur.is_some() || self.local.control.is_none() {
                continue;
            }
            let Some(id) = conn.open_stream(Dir::Uni) else {
                return;
            };
            let buf = if slot == 0 {
                self.local.encoder = Some(id);
                &mut self.local.encoder_buf
            } else {
                self.local.decoder = Some(id);
                &mut self.local.decoder_buf
            };
            let mut head = Vec::new();
            varint::write(&mut head, ty);
            head.append(buf);
            *buf = head;
            self.log(now, || H3LogEvent::StreamTypeSet {
                owner: Owner::Local,
                stream: id.0,
                stream_type: name,
            });
        }
    }

    /// Reads what arrived on a peer unidirectional stream.
    pub(crate) fn process_uni(&mut self, conn: &mut Connection, now: Instant, id: StreamId) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if self.error.is_some() {
                return;
            }
            let (n, fin) = match conn.read(id, &mut buf) {
                Ok(r) => (r.bytes, r.fin),
                Err(StreamError::Blocked) => return,
                Err(StreamError::Reset(_)) => (0, true),
                Err(_) => {
                    // Stopped by us (an unknown type, RFC 9114 §6.2): nothing more is
                    // read, so its entry goes now, whether the peer finishes or resets.
                    if matches!(self.uni.get(&id), Some(Uni::Ignored)) {
                        self.uni.remove(&id);
                    }
                    return;
                }
            };
            if n > 0 {
                if let Err(e) = self.uni_bytes(conn, now, id, &buf[..n]) {
                    self.fail(conn, now, e.code, &e.reason);
                    return;
                }
            }
            if fin {
                let critical = !matches!(self.uni.get(&id), Some(Uni::Ignored | Uni::Typing(_)));
                if critical {
                    // RFC 9114 §6.2.1, RFC 9204 §4.2: closing these is an error.
                    self.fail(
                        conn,
                        now,
                        code::H3_CLOSED_CRITICAL_STREAM,
                        "critical stream closed",
                    );
                }
                self.uni.remove(&id);
                return;
            }
            if n == 0 {
                return;
            }
        }
    }

    /// Bytes of a peer unidirectional stream.
    fn uni_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        mut data: &[u8],
    ) -> Result<(), H3Error> {
        if let Some(Uni::Typing(t)) = self.uni.get_mut(&id) {
            while !data.is_empty() && (t.is_empty() || t.len() < 1 << (t[0] >> 6)) {
                t.push(data[0]);
                data = &data[1..];
            }
            if t.is_empty() || t.len() < 1 << (t[0] >> 6) {
                return Ok(());
            }
            let ty = Reader::new(t).varint().unwrap_or(u64::MAX);
            let kind = self.stream_kind(conn, id, ty)?;
            let name = match kind {
                Uni::Control { .. } => "control",
                Uni::Encoder => "qpack_encode",
                Uni::Decoder => "qpack_decode",
                _ => "unknown",
            };
            self.log(now, || H3LogEvent::StreamTypeSet {
                owner: Owner::Remote,
                stream: id.0,
                stream_type: name,
            });
            self.uni.insert(id, kind);
        }
        if data.is_empty() {
            return Ok(());
        }
        match self.uni.get_mut(&id) {
            Some(Uni::Encoder) => {
                self.decoder.on_encoder_stream(data)?;
                self.unblock(conn, now);
            }
            Some(Uni::Decoder) => self.encoder.on_decoder_stream(data)?,
            Some(Uni::Control { .. }) => self.control_bytes(conn, now, id, data)?,
            _ => {}
        }
        Ok(())
    }

    /// What a new peer stream of type `ty` is; duplicates of the critical streams are
    /// H3_STREAM_CREATION_ERROR (RFC 9114 §6.2.1), pushes are refused (§6.2.2).
    fn stream_kind(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        ty: u64,
    ) -> Result<Uni, H3Error> {
        let exists = |want: fn(&Uni) -> bool| self.uni.values().any(want);
        let dup = || H3Error::new(code::H3_STREAM_CREATION_ERROR, "second critical stream");
        Ok(match ty {
            stream_type::CONTROL => {
                if exists(|u| matches!(u, Uni::Control { .. })) {
                    return Err(dup());
                }
                Uni::Control {
                    frames: FrameDecoder::new(MAX_CONTROL_FRAME),
                    settings_seen: false,
                }
            }
            stream_type::QPACK_ENCODER => {
                if exists(|u| matches!(u, Uni::Encoder)) {
                    return Err(dup());
                }
                Uni::Encoder
            }
            stream_type::QPACK_DECODER => {
                if exists(|u| matches!(u, Uni::Decoder)) {
                    return Err(dup());
                }
                Uni::Decoder
            }
            stream_type::PUSH if self.side == Side::Client => {
                return Err(H3Error::new(code::H3_ID_ERROR, "push without MAX_PUSH_ID"))
            }
            stream_type::PUSH => {
                return Err(H3Error::new(
                    code::H3_STREAM_CREATION_ERROR,
                    "push stream from a client",
                ))
            }
            _ => {
                // RFC 9114 §6.2: unknown types are ignored; abort reading.
                let _ = conn.stop_sending(id, code::H3_STREAM_CREATION_ERROR);
                Uni::Ignored
            }
        })
    }

    /// Frames on the peer's control stream (RFC 9114 §6.2.1, §7.2).
    fn control_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        data: &[u8],
    ) -> Result<(), H3Error> {
        let mut pos = 0;
        while pos < data.len() {
            let Some(Uni::Control { frames, .. }) = self.uni.get_mut(&id) else {
                return Ok(());
            };
            let (n, item) = frames.decode(&data[pos..])?;
            pos += n;
            let frame = match item {
                None => continue,
                Some(Decoded::Frame(f)) => f,
                Some(Decoded::DataHeader(_) | Decoded::Data(_)) => {
                    return Err(H3Error::new(
                        code::H3_FRAME_UNEXPECTED,
                        "DATA on control stream",
                    ))
                }
            };
            self.control_frame(conn, now, id, frame)?;
        }
        Ok(())
    }

    fn control_frame(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        frame: Frame,
    ) -> Result<(), H3Error> {
        let Some(Uni::Control { settings_seen, .. }) = self.uni.get_mut(&id) else {
            return Ok(());
        };
        let first = !*settings_seen;
        *settings_seen = true;
        let unexpected = |what: &str| {
            Err(H3Error::new(
                code::H3_FRAME_UNEXPECTED,
                format!("{what} on the control stream"),
            ))
        };
        match frame {
            Frame::Settings(s) if first => {
                let pairs = settings_pairs(&s);
                self.log(now, || H3LogEvent::FrameParsed {
                    stream: id.0,
                    length: s.encode().len() as u64,
                    frame: FrameInfo::Settings {
                        settings: pairs.clone(),
                    },
                });
                self.log(now, || H3LogEvent::ParametersSet {
                    owner: Owner::Remote,
                    settings: pairs,
                });
                self.encoder
                    .on_peer_settings(s.qpack_max_table_capacity, s.qpack_blocked_streams);
                self.peer_settings = Some(s);
                Ok(())
            }
            // RFC 9114 §6.2.1: SETTINGS must come first, and only once.
            _ if first => Err(H3Error::new(
                code::H3_MISSING_SETTINGS,
                "first frame not SETTINGS",
            )),
            Frame::Settings(_) => unexpected("second SETTINGS"),
            Frame::GoAway(g) => self.on_goaway(conn, now, id, g),
            Frame::MaxPushId(_) if self.side == Side::Client => unexpected("MAX_PUSH_ID"),
            Frame::MaxPushId(_) => Ok(()),
            // §7.2.3: no push was ever promised, so every push ID is unknown.
            Frame::CancelPush(_) => Err(H3Error::new(code::H3_ID_ERROR, "CANCEL_PUSH")),
            Frame::Headers(_) => unexpected("HEADERS"),
            Frame::PushPromise(_) => unexpected("PUSH_PROMISE"),
            Frame::Unknown(t) => {
                self.log(now, || H3LogEvent::FrameParsed {
                    stream: id.0,
                    length: 0,
                    frame: FrameInfo::Unknown { frame_type: t },
                });
                Ok(())
            }
        }
    }

    /// GOAWAY (RFC 9114 §5.2, §7.2.6): from a server it names the first client
    /// request not processed; IDs may only decrease.
    fn on_goaway(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        g: u64,
    ) -> Result<(), H3Error> {
        self.log(now, || H3LogEvent::FrameParsed {
            stream: id.0,
            length: varint::len(g) as u64,
            frame: FrameInfo::GoAway { id: g },
        });
        if self.side == Side::Client && !g.is_multiple_of(4) {
            return Err(H3Error::new(
                code::H3_ID_ERROR,
                "GOAWAY with a non-request stream ID",
            ));
        }
        if self.goaway_received.is_some_and(|prev| g > prev) {
            return Err(H3Error::new(code::H3_ID_ERROR, "GOAWAY ID increased"));
        }
        self.goaway_received = Some(g);
        self.events.push_back(H3Event::GoAway { id: g });
        if self.side == Side::Client {
            // Requests at or past the ID were not processed: they end rejected.
            let gone: Vec<StreamId> = self
                .requests
                .range(StreamId(g)..)
                .map(|(&s, _)| s)
                .collect();
            for s in gone {
                self.stream_error(conn, s, code::H3_REQUEST_REJECTED);
            }
        }
        Ok(())
    }
}

/// Settings as (identifier, value) pairs for logs.
pub(crate) fn settings_pairs(s: &Settings) -> Vec<(u64, u64)> {
    let enc = s.encode();
    let mut r = Reader::new(&enc);
    let mut out = Vec::new();
    while let (Ok(id), Ok(v)) = (r.varint(), r.varint()) {
        out.push((id, v));
    }
    out
}
