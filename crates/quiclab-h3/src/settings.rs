//! HTTP/3 SETTINGS (RFC 9114 §7.2.4, RFC 9204 §5): the parameters each side sends once
//! on its control stream.

use crate::error::{code, H3Error};
use quiclab_proto::varint::{self, Reader};

pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;

/// Most settings kept from a peer's frame; the rest are counted, not stored.
const MAX_UNKNOWN: usize = 16;

/// The settings of one side. Absent settings take the RFC defaults (0, 0, unlimited).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub qpack_max_table_capacity: u64,
    pub qpack_blocked_streams: u64,
    /// `None` = unlimited (the default, RFC 9114 §7.2.4.1).
    pub max_field_section_size: Option<u64>,
    /// Unknown (extension or grease) settings seen, up to a bound; ignored otherwise.
    pub unknown: Vec<(u64, u64)>,
}

impl Settings {
    /// The SETTINGS frame payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut put = |id: u64, v: u64| {
            varint::write(&mut out, id);
            varint::write(&mut out, v);
        };
        if self.qpack_max_table_capacity > 0 {
            put(QPACK_MAX_TABLE_CAPACITY, self.qpack_max_table_capacity);
        }
        if let Some(m) = self.max_field_section_size {
            put(MAX_FIELD_SECTION_SIZE, m);
        }
        if self.qpack_blocked_streams > 0 {
            put(QPACK_BLOCKED_STREAMS, self.qpack_blocked_streams);
        }
        for &(id, v) in &self.unknown {
            put(id, v);
        }
        out
    }

    /// Parses a SETTINGS payload: duplicates and HTTP/2 settings are H3_SETTINGS_ERROR
    /// (§7.2.4, §7.2.4.1); unknown identifiers are ignored.
    pub fn decode(payload: &[u8]) -> Result<Settings, H3Error> {
        let mut r = Reader::new(payload);
        let mut s = Settings::default();
        let mut seen: Vec<u64> = Vec::new();
        let frame_err = |_| H3Error::new(code::H3_FRAME_ERROR, "truncated SETTINGS");
        while !r.is_empty() {
            let id = r.varint().map_err(frame_err)?;
            let v = r.varint().map_err(frame_err)?;
            let known = matches!(
                id,
                QPACK_MAX_TABLE_CAPACITY | MAX_FIELD_SECTION_SIZE | QPACK_BLOCKED_STREAMS
            );
            if known {
                if seen.contains(&id) {
                    return Err(H3Error::new(
                        code::H3_SETTINGS_ERROR,
                        format!("duplicate setting {id:#x}"),
                    ));
                }
                seen.push(id);
            }
            match id {
                QPACK_MAX_TABLE_CAPACITY => s.qpack_max_table_capacity = v,
                MAX_FIELD_SECTION_SIZE => s.max_field_section_size = Some(v),
                QPACK_BLOCKED_STREAMS => s.qpack_blocked_streams = v,
                0x00 | 0x02..=0x05 => {
                    return Err(H3Error::new(
                        code::H3_SETTINGS_ERROR,
                        format!("HTTP/2 setting {id:#x}"),
                    ))
                }
                _ if s.unknown.len() < MAX_UNKNOWN => s.unknown.push((id, v)),
                _ => {}
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let s = Settings {
            qpack_max_table_capacity: 4096,
            qpack_blocked_streams: 16,
            max_field_section_size: Some(65536),
            unknown: vec![(0x21, 7)],
        };
        assert_eq!(Settings::decode(&s.encode()).unwrap(), s);
        assert_eq!(Settings::decode(&[]).unwrap(), Settings::default());
        let err = |b: &[u8]| Settings::decode(b).unwrap_err().code;
        assert_eq!(err(&[0x01, 0x05, 0x01, 0x06]), code::H3_SETTINGS_ERROR);
        assert_eq!(err(&[0x02, 0x00]), code::H3_SETTINGS_ERROR);
        assert_eq!(err(&[0x01]), code::H3_FRAME_ERROR);
    }
}
