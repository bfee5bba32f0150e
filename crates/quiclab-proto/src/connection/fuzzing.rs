//! What the fuzz targets in `fuzz/` need from a connection (cargo feature `fuzzing`, not
//! part of the default public API): sealing arbitrary frame bytes as a packet of this
//! connection, opening a packet its peer sealed (to write seed corpora from real
//! traffic), and the sizes of everything a peer can make it buffer.

use super::spaces::SpaceId;
use super::Connection;
use crate::crypto::protect::{decrypt_payload, seal, unprotect_header};
use crate::crypto::TAG_LEN;
use crate::wire::header::{
    decode_packet_number, parse_header, write_long_header, write_short_header,
};
use crate::wire::{varint, PacketType};
use std::ops::Range;

impl Connection {
    /// Seals `payload` (frame bytes, sent verbatim) as a packet of `space` numbered `pn`
    /// with this connection's send keys and connection IDs, and appends the datagram to
    /// `out`. Connection state (packet numbers, sent packets) does not change. Returns
    /// `false` when the space has no keys. Payloads shorter than the header protection
    /// sample needs are padded with PADDING; long-header payloads are cut at 16 KB.
    pub fn seal_for_fuzzing(
        &self,
        space: SpaceId,
        pn: u64,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        let Some(keys) = self.spaces[space as usize].keys.as_ref() else {
            return false;
        };
        let start = out.len();
        let dcid = self.cids.remote_cid();
        let pn_len = 4;
        let (length_offset, pn_offset) = if space == SpaceId::Data {
            let o = write_short_header(out, &dcid, false, self.key_update.phase(), pn, pn_len);
            (None, o)
        } else {
            let scid = self.cids.local_cid();
            let o = write_long_header(
                out,
                space.packet_type(),
                self.versions.current,
                &dcid,
                &scid,
                &[],
                pn,
                pn_len,
            );
            (Some(o.length_offset), o.pn_offset)
        };
        let payload = match length_offset {
            Some(_) => &payload[..payload.len().min(16_000)],
            None => payload,
        };
        out.extend_from_slice(payload);
        // RFC 9001 §5.4.2: a 16-byte sample 4 bytes after the packet number starts.
        let min_end = pn_offset + 4 + 16 - TAG_LEN;
        if out.len() < min_end {
            out.resize(min_end, 0);
        }
        let payload_end = out.len();
        if let Some(at) = length_offset {
            varint::patch_u14(out, at, (payload_end + TAG_LEN - pn_offset) as u64);
        }
        out.resize(payload_end + TAG_LEN, 0);
        seal(
            &*keys.local.packet,
            &*keys.local.header,
            &mut out[start..],
            pn_offset - start,
            pn,
        )
        .is_ok()
    }

    /// Opens the first packet of `datagram` (from this connection's peer) with this
    /// connection's receive keys for `space`, in place; returns the plaintext payload's
    /// range within `datagram`. Nothing in the connection changes (no packet number,
    /// key update or ACK state): for writing seed corpora from captured traffic.
    pub fn open_for_fuzzing(&self, space: SpaceId, datagram: &mut [u8]) -> Option<Range<usize>> {
        let keys = self.spaces[space as usize].keys.as_ref()?;
        let cid_len = self.config.connection_id_length as usize;
        let h = parse_header(datagram, cid_len).ok()?;
        if SpaceId::of(h.ty) != Some(space) || h.ty == PacketType::ZeroRtt {
            return None;
        }
        let (pn_offset, packet_len) = (h.pn_offset, h.packet_len);
        let packet = &mut datagram[..packet_len];
        let u = unprotect_header(&*keys.remote.header, packet, pn_offset).ok()?;
        let largest = self.spaces[space as usize].acks.largest();
        let pn = decode_packet_number(largest, u.truncated_pn, u.pn_len);
        decrypt_payload(&*keys.remote.packet, packet, pn_offset + u.pn_len, pn).ok()
    }
}
