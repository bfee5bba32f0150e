//! Transport parameters (RFC 9000 §18, RFC 9221 §3, draft-ietf-quic-ack-frequency §3).

use super::ids::{ConnectionId, Side};
use super::varint::{self, Reader};
use crate::error::TransportError;

/// Transport parameter IDs (RFC 9000 §18.2, RFC 9221 §3, ack-frequency draft §3).
pub mod id {
    pub const ORIGINAL_DESTINATION_CONNECTION_ID: u64 = 0x00;
    pub const MAX_IDLE_TIMEOUT: u64 = 0x01;
    pub const STATELESS_RESET_TOKEN: u64 = 0x02;
    pub const MAX_UDP_PAYLOAD_SIZE: u64 = 0x03;
    pub const INITIAL_MAX_DATA: u64 = 0x04;
    pub const INITIAL_MAX_STREAM_DATA_BIDI_LOCAL: u64 = 0x05;
    pub const INITIAL_MAX_STREAM_DATA_BIDI_REMOTE: u64 = 0x06;
    pub const INITIAL_MAX_STREAM_DATA_UNI: u64 = 0x07;
    pub const INITIAL_MAX_STREAMS_BIDI: u64 = 0x08;
    pub const INITIAL_MAX_STREAMS_UNI: u64 = 0x09;
    pub const ACK_DELAY_EXPONENT: u64 = 0x0a;
    pub const MAX_ACK_DELAY: u64 = 0x0b;
    pub const DISABLE_ACTIVE_MIGRATION: u64 = 0x0c;
    pub const PREFERRED_ADDRESS: u64 = 0x0d;
    pub const ACTIVE_CONNECTION_ID_LIMIT: u64 = 0x0e;
    pub const INITIAL_SOURCE_CONNECTION_ID: u64 = 0x0f;
    pub const RETRY_SOURCE_CONNECTION_ID: u64 = 0x10;
    /// RFC 9368 §3.
    pub const VERSION_INFORMATION: u64 = 0x11;
    pub const MAX_DATAGRAM_FRAME_SIZE: u64 = 0x20;
    pub const MIN_ACK_DELAY: u64 = 0xff04de1b;
    /// draft-ietf-quic-multipath §2.1 (editor's copy of 2026-03, the codepoint it
    /// suggests to IANA; see `frame_mp.rs` for the version implemented).
    pub const INITIAL_MAX_PATH_ID: u64 = 0x3e;
}

/// A server's preferred address (RFC 9000 §18.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreferredAddress {
    pub ipv4: Option<([u8; 4], u16)>,
    pub ipv6: Option<([u8; 16], u16)>,
    pub connection_id: ConnectionId,
    pub reset_token: [u8; 16],
}

/// All transport parameters an endpoint sends. `Default` gives the RFC's defaults for
/// absent parameters (so a decoded set with none present equals `Default`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportParameters {
    pub original_destination_connection_id: Option<ConnectionId>,
    /// Milliseconds; 0 = no idle timeout.
    pub max_idle_timeout: u64,
    pub stateless_reset_token: Option<[u8; 16]>,
    /// Default 65527; values below 1200 are invalid.
    pub max_udp_payload_size: u64,
    pub initial_max_data: u64,
    pub initial_max_stream_data_bidi_local: u64,
    pub initial_max_stream_data_bidi_remote: u64,
    pub initial_max_stream_data_uni: u64,
    pub initial_max_streams_bidi: u64,
    pub initial_max_streams_uni: u64,
    /// Default 3; above 20 is invalid.
    pub ack_delay_exponent: u64,
    /// Milliseconds, default 25; 2^14 or more is invalid.
    pub max_ack_delay: u64,
    pub disable_active_migration: bool,
    pub preferred_address: Option<PreferredAddress>,
    /// Default 2; below 2 is invalid.
    pub active_connection_id_limit: u64,
    pub initial_source_connection_id: Option<ConnectionId>,
    pub retry_source_connection_id: Option<ConnectionId>,
    /// RFC 9221 (0x20): absent = DATAGRAM frames not supported.
    pub max_datagram_frame_size: Option<u64>,
    /// draft-ietf-quic-ack-frequency (0xff04de1b), microseconds: absent = the extension
    /// is not negotiated; larger than max_ack_delay is invalid.
    pub min_ack_delay: Option<u64>,
    /// RFC 9368 §3 (0x11): the version in use and the versions the sender supports;
    /// absent = the sender does not take part in version downgrade prevention.
    pub version_information: Option<VersionInformation>,
    /// draft-ietf-quic-multipath §2.1 (0x3e): absent = multipath not offered; at most
    /// 2^32-1 (the path ID's width in the nonce, §2.4).
    pub initial_max_path_id: Option<u64>,
}

/// The version_information transport parameter (RFC 9368 §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInformation {
    /// The version of the packets that carried the handshake (never 0).
    pub chosen: u32,
    /// The sender's supported versions, most preferred first (never 0).
    pub available: Vec<u32>,
}

impl Default for TransportParameters {
    fn default() -> Self {
        TransportParameters {
            original_destination_connection_id: None,
            max_idle_timeout: 0,
            stateless_reset_token: None,
            max_udp_payload_size: 65527,
            initial_max_data: 0,
            initial_max_stream_data_bidi_local: 0,
            initial_max_stream_data_bidi_remote: 0,
            initial_max_stream_data_uni: 0,
            initial_max_streams_bidi: 0,
            initial_max_streams_uni: 0,
            ack_delay_exponent: 3,
            max_ack_delay: 25,
            disable_active_migration: false,
            preferred_address: None,
            active_connection_id_limit: 2,
            initial_source_connection_id: None,
            retry_source_connection_id: None,
            max_datagram_frame_size: None,
            min_ack_delay: None,
            version_information: None,
            initial_max_path_id: None,
        }
    }
}

fn tp_err(reason: &'static str) -> TransportError {
    TransportError::transport_parameter(reason)
}

fn put_varint(buf: &mut Vec<u8>, id: u64, v: u64) {
    varint::write(buf, id);
    varint::write(buf, varint::len(v) as u64);
    varint::write(buf, v);
}

fn put_bytes(buf: &mut Vec<u8>, id: u64, v: &[u8]) {
    varint::write(buf, id);
    varint::write(buf, v.len() as u64);
    buf.extend_from_slice(v);
}

/// A varint that must fill the parameter's value exactly (RFC 9000 §18).
fn get_varint(value: &[u8]) -> Result<u64, TransportError> {
    let mut r = Reader::new(value);
    let v = r
        .varint()
        .map_err(|_| tp_err("truncated integer parameter"))?;
    if !r.is_empty() {
        return Err(tp_err("integer parameter length mismatch"));
    }
    Ok(v)
}

fn get_cid(value: &[u8]) -> Result<ConnectionId, TransportError> {
    ConnectionId::new(value).ok_or_else(|| tp_err("connection ID longer than 20 bytes"))
}

/// RFC 9000 §18.2, Figure 22.
/// RFC 9368 §3: a Chosen Version and zero or more Available Versions, 4 bytes each;
/// a length that is not a multiple of 4, or a version 0, is a TRANSPORT_PARAMETER_ERROR.
fn decode_version_information(value: &[u8]) -> Result<VersionInformation, TransportError> {
    if value.is_empty() || !value.len().is_multiple_of(4) {
        return Err(tp_err(
            "version_information length is not a positive multiple of 4",
        ));
    }
    let mut versions = value
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    let chosen = versions.next().unwrap_or(0);
    let available: Vec<u32> = versions.collect();
    if chosen == 0 || available.contains(&0) {
        return Err(tp_err("version_information lists version 0"));
    }
    Ok(VersionInformation { chosen, available })
}

fn encode_preferred_address(p: &PreferredAddress) -> Vec<u8> {
    let mut v = Vec::with_capacity(p.connection_id.len().saturating_add(41));
    let (ip4, port4) = p.ipv4.unwrap_or(([0; 4], 0));
    let (ip6, port6) = p.ipv6.unwrap_or(([0; 16], 0));
    v.extend_from_slice(&ip4);
    v.extend_from_slice(&port4.to_be_bytes());
    v.extend_from_slice(&ip6);
    v.extend_from_slice(&port6.to_be_bytes());
    v.push(p.connection_id.len() as u8);
    v.extend_from_slice(p.connection_id.as_bytes());
    v.extend_from_slice(&p.reset_token);
    v
}

/// An all-zero address and port means "no address of this family" (RFC 9000 §18.2);
/// a zero-length connection ID is forbidden.
fn decode_preferred_address(value: &[u8]) -> Result<PreferredAddress, TransportError> {
    let trunc = |_| tp_err("truncated preferred_address");
    let mut r = Reader::new(value);
    let ip4: [u8; 4] = r.array().map_err(trunc)?;
    let port4 = r.u16().map_err(trunc)?;
    let ip6: [u8; 16] = r.array().map_err(trunc)?;
    let port6 = r.u16().map_err(trunc)?;
    let cid_len = r.u8().map_err(trunc)?;
    let cid = r.bytes(usize::from(cid_len)).map_err(trunc)?;
    let reset_token = r.array().map_err(trunc)?;
    if !r.is_empty() {
        return Err(tp_err("preferred_address length mismatch"));
    }
    if cid.is_empty() {
        return Err(tp_err("preferred_address with a zero-length connection ID"));
    }
    Ok(PreferredAddress {
        ipv4: (ip4 != [0; 4] || port4 != 0).then_some((ip4, port4)),
        ipv6: (ip6 != [0; 16] || port6 != 0).then_some((ip6, port6)),
        connection_id: get_cid(cid)?,
        reset_token,
    })
}

impl TransportParameters {
    /// Appends the encoding (RFC 9000 §18). Integer parameters equal to their default
    /// are omitted; `Some` values (including empty connection IDs) are always sent.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let d = Self::default();
        if let Some(c) = &self.original_destination_connection_id {
            put_bytes(buf, id::ORIGINAL_DESTINATION_CONNECTION_ID, c.as_bytes());
        }
        let ints = [
            (
                id::MAX_IDLE_TIMEOUT,
                self.max_idle_timeout,
                d.max_idle_timeout,
            ),
            (
                id::MAX_UDP_PAYLOAD_SIZE,
                self.max_udp_payload_size,
                d.max_udp_payload_size,
            ),
            (
                id::INITIAL_MAX_DATA,
                self.initial_max_data,
                d.initial_max_data,
            ),
            (
                id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL,
                self.initial_max_stream_data_bidi_local,
                d.initial_max_stream_data_bidi_local,
            ),
            (
                id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE,
                self.initial_max_stream_data_bidi_remote,
                d.initial_max_stream_data_bidi_remote,
            ),
            (
                id::INITIAL_MAX_STREAM_DATA_UNI,
                self.initial_max_stream_data_uni,
                d.initial_max_stream_data_uni,
            ),
            (
                id::INITIAL_MAX_STREAMS_BIDI,
                self.initial_max_streams_bidi,
                d.initial_max_streams_bidi,
            ),
            (
                id::INITIAL_MAX_STREAMS_UNI,
                self.initial_max_streams_uni,
                d.initial_max_streams_uni,
            ),
            (
                id::ACK_DELAY_EXPONENT,
                self.ack_delay_exponent,
                d.ack_delay_exponent,
            ),
            (id::MAX_ACK_DELAY, self.max_ack_delay, d.max_ack_delay),
            (
                id::ACTIVE_CONNECTION_ID_LIMIT,
                self.active_connection_id_limit,
                d.active_connection_id_limit,
            ),
        ];
        for (pid, v, default) in ints {
            if v != default {
                put_varint(buf, pid, v);
            }
        }
        if let Some(t) = &self.stateless_reset_token {
            put_bytes(buf, id::STATELESS_RESET_TOKEN, t);
        }
        if self.disable_active_migration {
            put_bytes(buf, id::DISABLE_ACTIVE_MIGRATION, &[]);
        }
        if let Some(p) = &self.preferred_address {
            put_bytes(buf, id::PREFERRED_ADDRESS, &encode_preferred_address(p));
        }
        if let Some(c) = &self.initial_source_connection_id {
            put_bytes(buf, id::INITIAL_SOURCE_CONNECTION_ID, c.as_bytes());
        }
        if let Some(c) = &self.retry_source_connection_id {
            put_bytes(buf, id::RETRY_SOURCE_CONNECTION_ID, c.as_bytes());
        }
        if let Some(v) = self.max_datagram_frame_size {
            put_varint(buf, id::MAX_DATAGRAM_FRAME_SIZE, v);
        }
        if let Some(v) = self.min_ack_delay {
            put_varint(buf, id::MIN_ACK_DELAY, v);
        }
        if let Some(v) = self.initial_max_path_id {
            put_varint(buf, id::INITIAL_MAX_PATH_ID, v);
        }
        if let Some(vi) = &self.version_information {
            let mut value = vi.chosen.to_be_bytes().to_vec();
            for v in &vi.available {
                value.extend_from_slice(&v.to_be_bytes());
            }
            put_bytes(buf, id::VERSION_INFORMATION, &value);
        }
    }

    /// Decodes and validates the parameters `sent_by` an endpoint (RFC 9000 §7.4, §18.2):
    /// any violation is TRANSPORT_PARAMETER_ERROR. Unknown parameters are ignored.
    ///
    /// Not checked here (the connection knows the context): the presence and values of
    /// the connection ID parameters (RFC 9000 §7.3).
    pub fn decode(data: &[u8], sent_by: Side) -> Result<Self, TransportError> {
        let mut tp = Self::default();
        let mut r = Reader::new(data);
        // Every ID seen, including unknown ones, to reject duplicates (RFC 9000 §7.4).
        let mut seen: Vec<u64> = Vec::new();
        while !r.is_empty() {
            let trunc = |_| tp_err("truncated transport parameter");
            let pid = r.varint().map_err(trunc)?;
            let len = r.varint().map_err(trunc)?;
            let len = usize::try_from(len).map_err(|_| tp_err("parameter too long"))?;
            let value = r.bytes(len).map_err(trunc)?;
            seen.push(pid);
            match pid {
                id::ORIGINAL_DESTINATION_CONNECTION_ID => {
                    tp.original_destination_connection_id = Some(get_cid(value)?)
                }
                id::MAX_IDLE_TIMEOUT => tp.max_idle_timeout = get_varint(value)?,
                id::STATELESS_RESET_TOKEN => {
                    let t: [u8; 16] = value
                        .try_into()
                        .map_err(|_| tp_err("stateless_reset_token is not 16 bytes"))?;
                    tp.stateless_reset_token = Some(t);
                }
                id::MAX_UDP_PAYLOAD_SIZE => tp.max_udp_payload_size = get_varint(value)?,
                id::INITIAL_MAX_DATA => tp.initial_max_data = get_varint(value)?,
                id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL => {
                    tp.initial_max_stream_data_bidi_local = get_varint(value)?
                }
                id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE => {
                    tp.initial_max_stream_data_bidi_remote = get_varint(value)?
                }
                id::INITIAL_MAX_STREAM_DATA_UNI => {
                    tp.initial_max_stream_data_uni = get_varint(value)?
                }
                id::INITIAL_MAX_STREAMS_BIDI => tp.initial_max_streams_bidi = get_varint(value)?,
                id::INITIAL_MAX_STREAMS_UNI => tp.initial_max_streams_uni = get_varint(value)?,
                id::ACK_DELAY_EXPONENT => tp.ack_delay_exponent = get_varint(value)?,
                id::MAX_ACK_DELAY => tp.max_ack_delay = get_varint(value)?,
                id::DISABLE_ACTIVE_MIGRATION => {
                    if !value.is_empty() {
                        return Err(tp_err("disable_active_migration with a value"));
                    }
                    tp.disable_active_migration = true;
                }
                id::PREFERRED_ADDRESS => {
                    tp.preferred_address = Some(decode_preferred_address(value)?)
                }
                id::ACTIVE_CONNECTION_ID_LIMIT => {
                    tp.active_connection_id_limit = get_varint(value)?
                }
                id::INITIAL_SOURCE_CONNECTION_ID => {
                    tp.initial_source_connection_id = Some(get_cid(value)?)
                }
                id::RETRY_SOURCE_CONNECTION_ID => {
                    tp.retry_source_connection_id = Some(get_cid(value)?)
                }
                id::MAX_DATAGRAM_FRAME_SIZE => {
                    tp.max_datagram_frame_size = Some(get_varint(value)?)
                }
                id::MIN_ACK_DELAY => tp.min_ack_delay = Some(get_varint(value)?),
                id::INITIAL_MAX_PATH_ID => tp.initial_max_path_id = Some(get_varint(value)?),
                id::VERSION_INFORMATION => {
                    tp.version_information = Some(decode_version_information(value)?)
                }
                // RFC 9000 §18.1: unknown (e.g. GREASE 31*N+27) parameters are ignored.
                _ => {}
            }
        }
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(tp_err("duplicate transport parameter"));
        }
        tp.validate(sent_by)?;
        Ok(tp)
    }

    /// The value checks of RFC 9000 §18.2, RFC 9221 §3 and ack-frequency §3.
    fn validate(&self, sent_by: Side) -> Result<(), TransportError> {
        // RFC 9000 §18.2: server-only parameters.
        if sent_by == Side::Client
            && (self.original_destination_connection_id.is_some()
                || self.preferred_address.is_some()
                || self.retry_source_connection_id.is_some()
                || self.stateless_reset_token.is_some())
        {
            return Err(tp_err("server-only transport parameter sent by a client"));
        }
        if self.max_udp_payload_size < 1200 {
            return Err(tp_err("max_udp_payload_size below 1200"));
        }
        if self.ack_delay_exponent > 20 {
            return Err(tp_err("ack_delay_exponent above 20"));
        }
        if self.max_ack_delay >= 1 << 14 {
            return Err(tp_err("max_ack_delay of 2^14 or more"));
        }
        if self.active_connection_id_limit < 2 {
            return Err(tp_err("active_connection_id_limit below 2"));
        }
        // RFC 9000 §18.2: stream counts above 2^60 are invalid.
        if self.initial_max_streams_bidi > 1 << 60 || self.initial_max_streams_uni > 1 << 60 {
            return Err(tp_err("initial_max_streams above 2^60"));
        }
        // ack-frequency §3: min_ack_delay (us) must not exceed max_ack_delay (ms).
        if let Some(min) = self.min_ack_delay {
            if min > self.max_ack_delay.saturating_mul(1000) {
                return Err(tp_err("min_ack_delay above max_ack_delay"));
            }
        }
        // draft-ietf-quic-multipath §2.1: a value above 2^32-1 is TRANSPORT_PARAMETER_ERROR.
        if self
            .initial_max_path_id
            .is_some_and(|v| v > u64::from(u32::MAX))
        {
            return Err(tp_err("initial_max_path_id above 2^32-1"));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;
    use crate::error::TransportErrorCode as Code;
    use proptest::prelude::*;

    fn cid(b: &[u8]) -> ConnectionId {
        ConnectionId::new(b).unwrap()
    }

    fn full_server() -> TransportParameters {
        TransportParameters {
            original_destination_connection_id: Some(cid(&[1; 8])),
            max_idle_timeout: 30_000,
            stateless_reset_token: Some([7; 16]),
            max_udp_payload_size: 1472,
            initial_max_data: 1 << 20,
            initial_max_stream_data_bidi_local: 1 << 16,
            initial_max_stream_data_bidi_remote: 1 << 17,
            initial_max_stream_data_uni: 1 << 18,
            initial_max_streams_bidi: 100,
            initial_max_streams_uni: 1 << 60,
            ack_delay_exponent: 20,
            max_ack_delay: (1 << 14) - 1,
            disable_active_migration: true,
            preferred_address: Some(PreferredAddress {
                ipv4: Some(([10, 0, 0, 1], 4433)),
                ipv6: None,
                connection_id: cid(&[9; 20]),
                reset_token: [3; 16],
            }),
            active_connection_id_limit: 8,
            initial_source_connection_id: Some(ConnectionId::EMPTY),
            retry_source_connection_id: Some(cid(&[4; 4])),
            max_datagram_frame_size: Some(0),
            min_ack_delay: Some(1000),
            initial_max_path_id: Some(u64::from(u32::MAX)),
            version_information: Some(VersionInformation {
                chosen: 0x6b33_43cf,
                available: vec![0x6b33_43cf, 1],
            }),
        }
    }

    fn encoded(tp: &TransportParameters) -> Vec<u8> {
        let mut buf = Vec::new();
        tp.encode(&mut buf);
        buf
    }

    fn code(data: &[u8], side: Side) -> Code {
        TransportParameters::decode(data, side).unwrap_err().code
    }

    /// One raw parameter.
    fn param(pid: u64, value: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        put_bytes(&mut b, pid, value);
        b
    }

    fn varint_param(pid: u64, v: u64) -> Vec<u8> {
        let mut b = Vec::new();
        put_varint(&mut b, pid, v);
        b
    }

    #[test]
    fn roundtrip_all_parameters() {
        let tp = full_server();
        let buf = encoded(&tp);
        assert_eq!(TransportParameters::decode(&buf, Side::Server).unwrap(), tp);
        let client = TransportParameters {
            initial_source_connection_id: Some(cid(&[5; 5])),
            ..Default::default()
        };
        let buf = encoded(&client);
        assert_eq!(
            TransportParameters::decode(&buf, Side::Client).unwrap(),
            client
        );
    }

    #[test]
    fn defaults_are_omitted() {
        assert!(encoded(&TransportParameters::default()).is_empty());
        assert_eq!(
            TransportParameters::decode(&[], Side::Client).unwrap(),
            TransportParameters::default()
        );
        // An empty CID that is present is still sent.
        let tp = TransportParameters {
            initial_source_connection_id: Some(ConnectionId::EMPTY),
            ..Default::default()
        };
        assert_eq!(encoded(&tp), vec![0x0f, 0x00]);
    }

    #[test]
    fn version_information_rules() {
        let ok = param(id::VERSION_INFORMATION, &[0, 0, 0, 1]);
        let tp = TransportParameters::decode(&ok, Side::Client).unwrap();
        let vi = tp.version_information.unwrap();
        assert_eq!((vi.chosen, vi.available), (1, vec![]));
        for bad in [
            &[][..],
            &[0, 0, 1],
            &[0, 0, 0, 0],
            &[0, 0, 0, 1, 0, 0, 0, 0],
        ] {
            let buf = param(id::VERSION_INFORMATION, bad);
            assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
        }
    }

    #[test]
    fn unknown_and_grease_ignored() {
        let mut buf = param(31 * 5 + 27, b"grease");
        buf.extend(param(0x4000, &[]));
        buf.extend(varint_param(id::MAX_IDLE_TIMEOUT, 5));
        let tp = TransportParameters::decode(&buf, Side::Client).unwrap();
        assert_eq!(tp.max_idle_timeout, 5);
    }

    #[test]
    fn duplicates_rejected() {
        let mut buf = varint_param(id::MAX_IDLE_TIMEOUT, 5);
        buf.extend(varint_param(id::MAX_IDLE_TIMEOUT, 5));
        assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
        let mut buf = param(27, b"");
        buf.extend(param(27, b"x"));
        assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
    }

    #[test]
    fn value_length_mismatch() {
        // A 1-byte varint in a 2-byte value, a 2-byte varint in a 1-byte value, empty.
        for value in [&[0x05, 0x00][..], &[0x40], &[]] {
            let buf = param(id::INITIAL_MAX_DATA, value);
            assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
        }
        // Non-minimal but exact is fine.
        let buf = param(id::INITIAL_MAX_DATA, &[0x40, 0x05]);
        let tp = TransportParameters::decode(&buf, Side::Client).unwrap();
        assert_eq!(tp.initial_max_data, 5);
        // Fixed-size values of the wrong size.
        let buf = param(id::STATELESS_RESET_TOKEN, &[0; 15]);
        assert_eq!(code(&buf, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
        let mut pa = encode_preferred_address(full_server().preferred_address.as_ref().unwrap());
        pa.push(0);
        let buf = param(id::PREFERRED_ADDRESS, &pa);
        assert_eq!(code(&buf, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
        // Length beyond the input.
        assert_eq!(
            code(&[0x04, 0x05, 0x01], Side::Client),
            Code::TRANSPORT_PARAMETER_ERROR
        );
    }

    #[test]
    fn server_only_parameters_from_client() {
        let pa = encode_preferred_address(full_server().preferred_address.as_ref().unwrap());
        let cases = [
            param(id::ORIGINAL_DESTINATION_CONNECTION_ID, &[1; 8]),
            param(id::PREFERRED_ADDRESS, &pa),
            param(id::RETRY_SOURCE_CONNECTION_ID, &[1; 8]),
            param(id::STATELESS_RESET_TOKEN, &[1; 16]),
        ];
        for buf in cases {
            assert!(TransportParameters::decode(&buf, Side::Server).is_ok());
            assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
        }
    }

    #[test]
    fn value_limits() {
        let bad = [
            varint_param(id::MAX_UDP_PAYLOAD_SIZE, 1199),
            varint_param(id::ACK_DELAY_EXPONENT, 21),
            varint_param(id::MAX_ACK_DELAY, 1 << 14),
            varint_param(id::ACTIVE_CONNECTION_ID_LIMIT, 1),
            varint_param(id::ACTIVE_CONNECTION_ID_LIMIT, 0),
            varint_param(id::INITIAL_MAX_STREAMS_BIDI, (1 << 60) + 1),
            varint_param(id::INITIAL_MAX_STREAMS_UNI, (1 << 60) + 1),
            // Default max_ack_delay is 25 ms.
            varint_param(id::MIN_ACK_DELAY, 25_001),
            varint_param(id::INITIAL_MAX_PATH_ID, 1 << 32),
            varint_param(id::INITIAL_MAX_PATH_ID, varint::MAX),
            param(id::INITIAL_MAX_PATH_ID, &[]),
            param(id::INITIAL_SOURCE_CONNECTION_ID, &[0; 21]),
            param(id::DISABLE_ACTIVE_MIGRATION, &[0]),
        ];
        for buf in bad {
            assert_eq!(
                code(&buf, Side::Server),
                Code::TRANSPORT_PARAMETER_ERROR,
                "{buf:02x?}"
            );
        }
        let ok = [
            varint_param(id::MAX_UDP_PAYLOAD_SIZE, 1200),
            varint_param(id::ACK_DELAY_EXPONENT, 20),
            varint_param(id::MAX_ACK_DELAY, (1 << 14) - 1),
            varint_param(id::ACTIVE_CONNECTION_ID_LIMIT, 2),
            varint_param(id::INITIAL_MAX_STREAMS_BIDI, 1 << 60),
            varint_param(id::MIN_ACK_DELAY, 25_000),
            varint_param(id::INITIAL_MAX_PATH_ID, 0),
            varint_param(id::INITIAL_MAX_PATH_ID, u64::from(u32::MAX)),
            param(id::INITIAL_SOURCE_CONNECTION_ID, &[0; 20]),
        ];
        for buf in ok {
            assert!(TransportParameters::decode(&buf, Side::Server).is_ok());
        }
        // min_ack_delay is checked against the max_ack_delay actually sent, in any order.
        let mut buf = varint_param(id::MIN_ACK_DELAY, 40_000);
        buf.extend(varint_param(id::MAX_ACK_DELAY, 40));
        assert!(TransportParameters::decode(&buf, Side::Client).is_ok());
        let mut buf = varint_param(id::MIN_ACK_DELAY, 40_001);
        buf.extend(varint_param(id::MAX_ACK_DELAY, 40));
        assert_eq!(code(&buf, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
    }

    #[test]
    fn preferred_address_rules() {
        let mut pa = full_server().preferred_address.unwrap();
        pa.ipv4 = None;
        pa.ipv6 = Some(([0x20; 16], 443));
        let tp = TransportParameters {
            preferred_address: Some(pa.clone()),
            ..Default::default()
        };
        assert_eq!(
            TransportParameters::decode(&encoded(&tp), Side::Server).unwrap(),
            tp
        );
        // RFC 9000 §18.2: a zero-length connection ID is forbidden.
        pa.connection_id = ConnectionId::EMPTY;
        let buf = param(id::PREFERRED_ADDRESS, &encode_preferred_address(&pa));
        assert_eq!(code(&buf, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
    }

    fn arb_cid() -> impl Strategy<Value = ConnectionId> {
        proptest::collection::vec(any::<u8>(), 0..=20).prop_map(|v| cid(&v))
    }

    fn arb_addr<const N: usize>() -> impl Strategy<Value = Option<([u8; N], u16)>>
    where
        [u8; N]: proptest::arbitrary::Arbitrary,
    {
        // All-zero address and port encode "absent".
        proptest::option::of((any::<[u8; N]>(), 1u16..))
    }

    prop_compose! {
        fn arb_tp()(
            cids in (proptest::option::of(arb_cid()), proptest::option::of(arb_cid()), proptest::option::of(arb_cid())),
            srt in proptest::option::of(any::<[u8; 16]>()),
            ints in proptest::array::uniform7(0..=varint::MAX),
            udp in 1200..=varint::MAX,
            streams in (0..=1u64 << 60, 0..=1u64 << 60),
            ade in 0u64..=20,
            mad in 0u64..1 << 14,
            dam in any::<bool>(),
            pa in proptest::option::of((arb_addr::<4>(), arb_addr::<16>(), proptest::collection::vec(any::<u8>(), 1..=20), any::<[u8; 16]>())),
            acl in 2..=varint::MAX,
            dgram in proptest::option::of(0..=varint::MAX),
            min_frac in proptest::option::of(0.0f64..=1.0),
            max_path in proptest::option::of(0..=u64::from(u32::MAX)),
        ) -> TransportParameters {
            TransportParameters {
                original_destination_connection_id: cids.0,
                max_idle_timeout: ints[0],
                stateless_reset_token: srt,
                max_udp_payload_size: udp,
                initial_max_data: ints[1],
                initial_max_stream_data_bidi_local: ints[2],
                initial_max_stream_data_bidi_remote: ints[3],
                initial_max_stream_data_uni: ints[4],
                initial_max_streams_bidi: streams.0,
                initial_max_streams_uni: streams.1,
                ack_delay_exponent: ade,
                max_ack_delay: mad,
                disable_active_migration: dam,
                preferred_address: pa.map(|(ipv4, ipv6, id, reset_token)| PreferredAddress {
                    ipv4, ipv6, connection_id: cid(&id), reset_token,
                }),
                active_connection_id_limit: acl,
                initial_source_connection_id: cids.1,
                retry_source_connection_id: cids.2,
                max_datagram_frame_size: dgram,
                min_ack_delay: min_frac.map(|f| (f * (mad * 1000) as f64) as u64),
                version_information: None,
                initial_max_path_id: max_path,
            }
        }
    }

    proptest! {
        #[test]
        fn prop_roundtrip(tp in arb_tp()) {
            let buf = encoded(&tp);
            prop_assert_eq!(TransportParameters::decode(&buf, Side::Server).unwrap(), tp);
        }

        #[test]
        fn prop_arbitrary_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..300)) {
            for side in [Side::Client, Side::Server] {
                if let Ok(tp) = TransportParameters::decode(&buf, side) {
                    let again = TransportParameters::decode(&encoded(&tp), side).unwrap();
                    prop_assert_eq!(again, tp);
                }
            }
        }
    }
}
