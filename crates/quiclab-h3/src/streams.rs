//! Per-stream state of an HTTP/3 connection: request streams (message phase, receive
//! stash, send buffer) and unidirectional streams (ours and the peer's). Data only;
//! the behaviour lives in `request.rs` and `uni.rs`.

use crate::frame::FrameDecoder;
use quiclab_proto::{Connection, StreamError, StreamId};

/// Where a message is in its frame sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for the (final) head.
    Head,
    Body,
    /// Trailers received: nothing more may come but FIN.
    Trailers,
}

/// One request stream.
pub(crate) struct Request {
    pub frames: FrameDecoder,
    pub phase: Phase,
    pub head_done: bool,
    /// A HEADERS payload waiting for QPACK inserts.
    pub blocked: Option<Vec<u8>>,
    /// Bytes read from the stream and not yet processed (after a block).
    pub stash: Vec<u8>,
    pub recv_fin: bool,
    pub recv_done: bool,
    pub content_length: Option<u64>,
    pub body: u64,
    /// Framed bytes waiting for the QUIC stream.
    pub send: Vec<u8>,
    pub fin_requested: bool,
    pub send_done: bool,
}

impl Request {
    pub fn new(max_field_section: u64) -> Self {
        Request {
            frames: FrameDecoder::new(max_field_section),
            phase: Phase::Head,
            head_done: false,
            blocked: None,
            stash: Vec::new(),
            recv_fin: false,
            recv_done: false,
            content_length: None,
            body: 0,
            send: Vec::new(),
            fin_requested: false,
            send_done: false,
        }
    }
}

/// A peer unidirectional stream.
pub(crate) enum Uni {
    /// Reading the stream type.
    Typing(Vec<u8>),
    Control {
        frames: FrameDecoder,
        settings_seen: bool,
    },
    Encoder,
    Decoder,
    /// Unknown type: stopped, data discarded.
    Ignored,
}

/// Our three unidirectional streams and what is waiting to be written on them.
#[derive(Default)]
pub(crate) struct LocalStreams {
    pub control: Option<StreamId>,
    pub encoder: Option<StreamId>,
    pub decoder: Option<StreamId>,
    pub control_buf: Vec<u8>,
    pub encoder_buf: Vec<u8>,
    pub decoder_buf: Vec<u8>,
}

impl LocalStreams {
    pub fn is_critical(&self, id: StreamId) -> bool {
        [self.control, self.encoder, self.decoder].contains(&Some(id))
    }

    /// Writes what the streams take; an error names a critical stream that failed.
    pub fn flush(&mut self, conn: &mut Connection) -> Result<(), String> {
        for (id, buf) in [
            (self.control, &mut self.control_buf),
            (self.encoder, &mut self.encoder_buf),
            (self.decoder, &mut self.decoder_buf),
        ] {
            let Some(id) = id else { continue };
            while !buf.is_empty() {
                match conn.write(id, buf) {
                    Ok(0) | Err(StreamError::Blocked) => break,
                    Ok(n) => {
                        buf.drain(..n);
                    }
                    Err(e) => return Err(format!("critical stream {id}: {e}")),
                }
            }
        }
        Ok(())
    }
}
