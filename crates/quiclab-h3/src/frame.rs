//! HTTP/3 frames (RFC 9114 §7): encoding, and an incremental decoder that takes stream
//! bytes as they arrive. DATA payloads are streamed through, never buffered; other
//! known frames are buffered up to a bound; unknown frame types are skipped without
//! buffering (§9). Malformed input yields the RFC's error code, never a panic.

use crate::error::{code, H3Error};
use crate::settings::Settings;
use quiclab_proto::varint::{self, Reader};

/// Frame types (RFC 9114 §7.2, §11.2.1).
pub mod ty {
    pub const DATA: u64 = 0x00;
    pub const HEADERS: u64 = 0x01;
    pub const CANCEL_PUSH: u64 = 0x03;
    pub const SETTINGS: u64 = 0x04;
    pub const PUSH_PROMISE: u64 = 0x05;
    pub const GOAWAY: u64 = 0x07;
    pub const MAX_PUSH_ID: u64 = 0x0d;
}

/// A complete non-DATA frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// An encoded field section (QPACK).
    Headers(Vec<u8>),
    Settings(Settings),
    GoAway(u64),
    CancelPush(u64),
    MaxPushId(u64),
    /// Only the push ID is kept: we never accept pushes.
    PushPromise(u64),
    /// An unknown or reserved type, payload skipped (RFC 9114 §9).
    Unknown(u64),
}

/// What the decoder produced from some input.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    Frame(Frame),
    /// A DATA frame of this payload length starts.
    DataHeader(u64),
    /// Payload bytes of the current DATA frame.
    Data(&'a [u8]),
}

/// Incremental frame decoder for one stream.
#[derive(Debug)]
pub struct FrameDecoder {
    state: State,
    /// Largest non-DATA payload buffered (HEADERS, SETTINGS); larger is an error.
    max_payload: u64,
}

#[derive(Debug)]
enum State {
    /// Reading type and length varints.
    Header(Vec<u8>),
    Payload {
        ty: u64,
        len: u64,
        buf: Vec<u8>,
    },
    Data {
        remaining: u64,
    },
    Skip {
        ty: u64,
        remaining: u64,
    },
}

fn varint_len(first: u8) -> usize {
    1 << (first >> 6)
}

impl FrameDecoder {
    pub fn new(max_payload: u64) -> Self {
        FrameDecoder {
            state: State::Header(Vec::new()),
            max_payload,
        }
    }

    /// Whether the decoder is between frames (a FIN here is clean).
    pub fn is_idle(&self) -> bool {
        matches!(&self.state, State::Header(b) if b.is_empty())
    }

    /// Consumes some of `input`; returns bytes consumed and what completed, if anything.
    /// Call again with the rest until it consumes nothing.
    pub fn decode<'a>(&mut self, input: &'a [u8]) -> Result<(usize, Option<Decoded<'a>>), H3Error> {
        match &mut self.state {
            State::Header(hdr) => {
                let mut used = 0;
                while used < input.len() {
                    hdr.push(input[used]);
                    used += 1;
                    let tlen = varint_len(hdr[0]);
                    if hdr.len() > tlen && hdr.len() == tlen + varint_len(hdr[tlen]) {
                        let mut r = Reader::new(hdr);
                        let (Ok(ty), Ok(len)) = (r.varint(), r.varint()) else {
                            return Err(H3Error::new(code::H3_FRAME_ERROR, "bad frame header"));
                        };
                        let out = self.start(ty, len)?;
                        return Ok((used, out));
                    }
                }
                Ok((used, None))
            }
            State::Data { remaining } => {
                let n = (*remaining).min(input.len() as u64) as usize;
                *remaining -= n as u64;
                if *remaining == 0 {
                    self.state = State::Header(Vec::new());
                }
                Ok((n, (n > 0).then(|| Decoded::Data(&input[..n]))))
            }
            State::Skip { ty, remaining } => {
                let n = (*remaining).min(input.len() as u64) as usize;
                *remaining -= n as u64;
                if *remaining == 0 {
                    let ty = *ty;
                    self.state = State::Header(Vec::new());
                    return Ok((n, Some(Decoded::Frame(Frame::Unknown(ty)))));
                }
                Ok((n, None))
            }
            State::Payload { ty, len, buf } => {
                let want = (*len as usize) - buf.len();
                let n = want.min(input.len());
                buf.extend_from_slice(&input[..n]);
                if buf.len() as u64 == *len {
                    let frame = parse(*ty, buf)?;
                    self.state = State::Header(Vec::new());
                    return Ok((n, Some(Decoded::Frame(frame))));
                }
                Ok((n, None))
            }
        }
    }

    /// A frame header was read: choose how to handle the payload.
    fn start(&mut self, ty: u64, len: u64) -> Result<Option<Decoded<'static>>, H3Error> {
        match ty {
            ty::DATA => {
                self.state = if len == 0 {
                    State::Header(Vec::new())
                } else {
                    State::Data { remaining: len }
                };
                Ok(Some(Decoded::DataHeader(len)))
            }
            // HTTP/2 frame types with no HTTP/3 meaning (§7.2.8).
            0x02 | 0x06 | 0x08 | 0x09 => Err(H3Error::new(
                code::H3_FRAME_UNEXPECTED,
                format!("HTTP/2 frame type {ty:#x}"),
            )),
            ty::HEADERS | ty::SETTINGS | ty::PUSH_PROMISE => {
                if len > self.max_payload {
                    return Err(H3Error::new(
                        code::H3_EXCESSIVE_LOAD,
                        format!("frame {ty:#x} of {len} bytes"),
                    ));
                }
                self.payload(ty, len)
            }
            ty::GOAWAY | ty::CANCEL_PUSH | ty::MAX_PUSH_ID => {
                if len == 0 || len > 8 {
                    return Err(H3Error::new(code::H3_FRAME_ERROR, "bad frame length"));
                }
                self.payload(ty, len)
            }
            _ if len == 0 => {
                self.state = State::Header(Vec::new());
                Ok(Some(Decoded::Frame(Frame::Unknown(ty))))
            }
            _ => {
                self.state = State::Skip { ty, remaining: len };
                Ok(None)
            }
        }
    }

    fn payload(&mut self, ty: u64, len: u64) -> Result<Option<Decoded<'static>>, H3Error> {
        if len == 0 {
            self.state = State::Header(Vec::new());
            return parse(ty, &[]).map(|f| Some(Decoded::Frame(f)));
        }
        self.state = State::Payload {
            ty,
            len,
            buf: Vec::new(),
        };
        Ok(None)
    }
}

/// Parses a complete known frame payload.
fn parse(ty: u64, p: &[u8]) -> Result<Frame, H3Error> {
    let one_varint = |p: &[u8]| {
        let mut r = Reader::new(p);
        match r.varint() {
            Ok(v) if r.is_empty() => Ok(v),
            _ => Err(H3Error::new(
                code::H3_FRAME_ERROR,
                "malformed frame payload",
            )),
        }
    };
    Ok(match ty {
        ty::HEADERS => Frame::Headers(p.to_vec()),
        ty::SETTINGS => Frame::Settings(Settings::decode(p)?),
        ty::GOAWAY => Frame::GoAway(one_varint(p)?),
        ty::CANCEL_PUSH => Frame::CancelPush(one_varint(p)?),
        ty::MAX_PUSH_ID => Frame::MaxPushId(one_varint(p)?),
        ty::PUSH_PROMISE => {
            let mut r = Reader::new(p);
            let id = r
                .varint()
                .map_err(|_| H3Error::new(code::H3_FRAME_ERROR, "malformed PUSH_PROMISE"))?;
            Frame::PushPromise(id)
        }
        _ => Frame::Unknown(ty),
    })
}

/// Appends a frame header.
pub fn encode_header(out: &mut Vec<u8>, ty: u64, len: u64) {
    varint::write(out, ty);
    varint::write(out, len);
}

/// Appends a whole frame (not DATA: its payload is written by the caller).
pub fn encode(out: &mut Vec<u8>, frame: &Frame) {
    let payload = match frame {
        Frame::Headers(b) => b.clone(),
        Frame::Settings(s) => s.encode(),
        Frame::GoAway(v) | Frame::CancelPush(v) | Frame::MaxPushId(v) | Frame::PushPromise(v) => {
            let mut b = Vec::new();
            varint::write(&mut b, *v);
            b
        }
        Frame::Unknown(_) => Vec::new(),
    };
    encode_header(out, frame_type(frame), payload.len() as u64);
    out.extend_from_slice(&payload);
}

/// The wire type of a frame.
pub fn frame_type(frame: &Frame) -> u64 {
    match frame {
        Frame::Headers(_) => ty::HEADERS,
        Frame::Settings(_) => ty::SETTINGS,
        Frame::GoAway(_) => ty::GOAWAY,
        Frame::CancelPush(_) => ty::CANCEL_PUSH,
        Frame::MaxPushId(_) => ty::MAX_PUSH_ID,
        Frame::PushPromise(_) => ty::PUSH_PROMISE,
        Frame::Unknown(t) => *t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `input` fed in pieces of `step` bytes into owned results.
    fn run(input: &[u8], step: usize) -> Result<(Vec<Frame>, Vec<u8>), H3Error> {
        let mut d = FrameDecoder::new(1024);
        let (mut frames, mut data) = (vec![], vec![]);
        for chunk in input.chunks(step.max(1)) {
            let mut pos = 0;
            while pos < chunk.len() {
                let (n, out) = d.decode(&chunk[pos..])?;
                pos += n;
                match out {
                    Some(Decoded::Frame(f)) => frames.push(f),
                    Some(Decoded::Data(b)) => data.extend_from_slice(b),
                    Some(Decoded::DataHeader(_)) | None => {}
                }
            }
        }
        assert!(d.is_idle());
        Ok((frames, data))
    }

    #[test]
    fn frames_in_any_split() {
        let mut wire = Vec::new();
        encode(&mut wire, &Frame::Settings(Settings::default()));
        encode(&mut wire, &Frame::Headers(vec![0, 0, 0xd1]));
        encode_header(&mut wire, ty::DATA, 5);
        wire.extend_from_slice(b"hello");
        // An unknown (grease) frame type 0x21 with a 3-byte payload.
        wire.extend_from_slice(&[0x21, 3, 9, 9, 9]);
        encode(&mut wire, &Frame::GoAway(4));
        for step in [1, 2, 3, 7, 100] {
            let (frames, data) = run(&wire, step).unwrap();
            assert_eq!(
                frames,
                vec![
                    Frame::Settings(Settings::default()),
                    Frame::Headers(vec![0, 0, 0xd1]),
                    Frame::Unknown(0x21),
                    Frame::GoAway(4)
                ]
            );
            assert_eq!(data, b"hello");
        }
    }

    #[test]
    fn errors() {
        let code_of = |b: &[u8]| run(b, 100).unwrap_err().code;
        assert_eq!(code_of(&[0x02, 0x00]), code::H3_FRAME_UNEXPECTED);
        assert_eq!(code_of(&[0x07, 0x02, 0x04, 0x00]), code::H3_FRAME_ERROR);
        assert_eq!(code_of(&[0x07, 0x00]), code::H3_FRAME_ERROR);
        assert_eq!(code_of(&[0x01, 0x44, 0x01]), code::H3_EXCESSIVE_LOAD);
        assert_eq!(code_of(&[0x04, 0x02, 0x02, 0x00]), code::H3_SETTINGS_ERROR);
    }
}
