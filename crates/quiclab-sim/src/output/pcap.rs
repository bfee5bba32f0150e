//! pcap files of simulated links: synthetic IPv4/UDP headers around each datagram,
//! timestamped with simulated time, so Wireshark (with the key log) decrypts them.

use quiclab_proto::time::Instant;
use std::io::{self, Write};
use std::net::SocketAddrV4;

/// Writes a classic pcap (microsecond timestamps, LINKTYPE_RAW = 101: IPv4 packets).
pub struct PcapWriter<W: Write> {
    _w: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header.
    pub fn new(writer: W) -> io::Result<Self> {
        let _ = writer;
        todo!("S-B")
    }

    /// Appends one UDP datagram from `src` to `dst` at simulated time `at`, wrapped in
    /// an IPv4 header (with a valid header checksum) and a UDP header (checksum valid).
    pub fn write_udp(
        &mut self,
        at: Instant,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        payload: &[u8],
    ) -> io::Result<()> {
        let _ = (at, src, dst, payload);
        todo!("S-B")
    }

    pub fn into_inner(self) -> W {
        todo!("S-B")
    }
}
