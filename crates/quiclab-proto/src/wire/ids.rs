//! Connection IDs and stream IDs.

use std::fmt;

/// A connection ID of 0 to 20 bytes (RFC 9000 §5.1), stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId {
    len: u8,
    bytes: [u8; ConnectionId::MAX_LEN],
}

impl ConnectionId {
    /// RFC 9000 §17.2: at most 20 bytes in QUIC v1.
    pub const MAX_LEN: usize = 20;

    /// `None` when `bytes` is longer than [`ConnectionId::MAX_LEN`].
    pub fn new(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > Self::MAX_LEN {
            return None;
        }
        let mut b = [0u8; Self::MAX_LEN];
        b[..bytes.len()].copy_from_slice(bytes);
        Some(ConnectionId {
            len: bytes.len() as u8,
            bytes: b,
        })
    }

    pub const EMPTY: ConnectionId = ConnectionId {
        len: 0,
        bytes: [0; Self::MAX_LEN],
    };

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Which endpoint: the client opened the connection, the server accepted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn is_client(self) -> bool {
        self == Side::Client
    }
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// Stream direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    Bi,
    Uni,
}

/// A stream ID (RFC 9000 §2.1): the two low bits carry initiator and direction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

impl StreamId {
    /// The `index`-th stream of this initiator and direction.
    pub fn new(initiator: Side, dir: Dir, index: u64) -> Self {
        let low = match initiator {
            Side::Client => 0,
            Side::Server => 1,
        } | match dir {
            Dir::Bi => 0,
            Dir::Uni => 2,
        };
        StreamId((index << 2) | low)
    }
    pub fn initiator(self) -> Side {
        if self.0 & 1 == 0 {
            Side::Client
        } else {
            Side::Server
        }
    }
    pub fn dir(self) -> Dir {
        if self.0 & 2 == 0 {
            Dir::Bi
        } else {
            Dir::Uni
        }
    }
    /// Position among the streams of the same initiator and direction.
    pub fn index(self) -> u64 {
        self.0 >> 2
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_id_bits() {
        let id = StreamId::new(Side::Server, Dir::Uni, 3);
        assert_eq!(id.0, 15);
        assert_eq!(
            (id.initiator(), id.dir(), id.index()),
            (Side::Server, Dir::Uni, 3)
        );
        assert!(ConnectionId::new(&[0; 21]).is_none());
    }
}
