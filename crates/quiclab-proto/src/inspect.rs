//! Reading QUIC packets as an on-path observer does, without a connection: the headers
//! of a datagram's coalesced packets before protection is removed, and the frames of a
//! client's Initial packets, whose keys anyone can derive from the client's Destination
//! Connection ID (RFC 9001 §5.2). For capture readers (the lab's pcap reader) and link
//! models that act on packet types (scripted drops); connections never go through here.

use crate::crypto::initial::initial_keys;
use crate::crypto::protect::{decrypt_payload, unprotect_header};
use crate::events::FrameSummary;
use crate::wire::header::{decode_packet_number, parse_header};
use crate::wire::{decode_frames, ConnectionId, PacketType, ProtectedHeader, Side};

/// The packets coalesced in `datagram` (RFC 9000 §12.2), in order: each one's header,
/// read without keys, and its bytes. A short header's DCID length is not known to an
/// observer, so it reads as empty. Long header packets carry a Length, so the walk steps
/// over them; a short header packet or a packet without Length (Retry, Version
/// Negotiation) is the last one, and bytes that do not parse (padding, garbage) end the
/// walk. Never panics.
pub fn coalesced_packets(datagram: &[u8]) -> CoalescedPackets<'_> {
    CoalescedPackets { rest: datagram }
}

/// The iterator of [`coalesced_packets`].
#[derive(Clone, Debug)]
pub struct CoalescedPackets<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for CoalescedPackets<'a> {
    type Item = (ProtectedHeader<'a>, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let Ok(h) = parse_header(self.rest, 0) else {
            self.rest = &[];
            return None;
        };
        // `parse_header` keeps `packet_len` within the datagram.
        let (packet, rest) = self.rest.split_at(h.packet_len);
        let has_length = matches!(
            h.ty,
            PacketType::Initial | PacketType::ZeroRtt | PacketType::Handshake
        );
        self.rest = if has_length && h.packet_len > 0 {
            rest
        } else {
            &[]
        };
        Some((h, packet))
    }
}

/// The frames of a client's Initial `packet` (one packet, still protected), opened with
/// the Initial keys of `client_dcid` (RFC 9001 §5.2), up to the first frame that does not
/// decode. `None` when the packet is not an Initial or does not open with those keys.
/// The packet number is decoded without a largest acknowledged (RFC 9000 §17.1), which
/// is right for a client's first Initials.
pub fn read_client_initial(packet: &[u8], client_dcid: &ConnectionId) -> Option<Vec<FrameSummary>> {
    let h = parse_header(packet, 0).ok()?;
    if h.ty != PacketType::Initial {
        return None;
    }
    let keys = initial_keys(h.version, client_dcid, Side::Server);
    let mut p = packet[..h.packet_len].to_vec();
    let u = unprotect_header(keys.remote.header.as_ref(), &mut p, h.pn_offset).ok()?;
    let pn = decode_packet_number(None, u.truncated_pn, u.pn_len);
    let header_len = h.pn_offset + u.pn_len;
    let range = decrypt_payload(keys.remote.packet.as_ref(), &mut p, header_len, pn).ok()?;
    Some(
        decode_frames(&p[range])
            .map_while(Result::ok)
            .map(|f| FrameSummary::from(&f))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportConfig;
    use crate::events::FrameKind;
    use crate::testing::{LinkConfig, Pair};

    /// A client's first datagram: one Initial carrying the ClientHello from offset 0,
    /// which opens with its own DCID's keys and not with another's.
    #[test]
    fn reads_a_client_first_initial() {
        let config = TransportConfig::default;
        let mut pair = Pair::new(
            config(),
            config(),
            [LinkConfig::default(), LinkConfig::default()],
            1,
        );
        pair.capture = Some(Vec::new());
        pair.flush();
        let (_, from_client, datagram) = pair.capture.take().unwrap().swap_remove(0);
        assert!(from_client);
        let packets: Vec<_> = coalesced_packets(&datagram).collect();
        assert_eq!(packets.len(), 1);
        let (h, packet) = &packets[0];
        assert_eq!(h.ty, PacketType::Initial);
        let frames = read_client_initial(packet, &h.dcid).expect("opens");
        assert!(frames
            .iter()
            .any(|f| matches!(f.kind, FrameKind::Crypto { offset: 0, .. })));
        let other = ConnectionId::new(&[7; 8]).unwrap();
        assert_eq!(read_client_initial(packet, &other), None);
        // Truncations and garbage neither panic nor open.
        for cut in 0..packet.len() {
            let _ = coalesced_packets(&packet[..cut]).count();
            assert_eq!(read_client_initial(&packet[..cut], &h.dcid), None);
        }
    }
}
