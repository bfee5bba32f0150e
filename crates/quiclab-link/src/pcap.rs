//! pcap files of links: synthetic IPv4/UDP headers around each datagram, timestamped
//! with the link's time (simulated, or since start in the emulator), so Wireshark (with
//! the key log) decrypts them.
//!
//! # Opening a simulated pcap in Wireshark
//!
//! The QUIC packets are real (real TLS, real packet protection), so Wireshark needs the
//! TLS secrets to read them. Give the client a [`MemoryKeyLog`] (for example through
//! `Pair::with_options`), write its lines with [`write_key_log`] next to the pcap, then:
//!
//! - **Wireshark**: Edit > Preferences > Protocols > TLS > "(Pre)-Master-Secret log
//!   filename" = the key log file; open the pcap. If the server port is not 443, use
//!   Analyze > Decode As... > UDP port > QUIC.
//! - **tshark**: `tshark -r run.pcap -o tls.keylog_file:run.keys -d udp.port==443,quic`
//!   (add `-V` for full frame detail, or `-Y quic.stream_data` to list stream data).
//!
//! A simulation (quiclab-sim's `Simulation` with `measure.pcap`) writes `pcap/<link>.pcap`
//! per link direction plus `pcap/keys.log`. Each capture holds one direction only, and
//! Wireshark needs the server's ServerHello (return direction) to decrypt the client's
//! Handshake and 1-RTT packets: merge them first, e.g. `mergecap -w both.pcap
//! forward.pcap return.pcap`. Flow `i`'s server listens on UDP port 4433 + `i`.
//!
//! Times in the capture are simulated time since the run started (the epoch 1970-01-01
//! in the display), so "seconds since beginning of capture" matches qlog times.
//!
//! [`MemoryKeyLog`]: quiclab_proto::tls::MemoryKeyLog

use pcap_file::pcap::{PcapHeader, PcapPacket};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use quiclab_proto::{Ecn, Instant};
use std::io::{self, Write};
use std::net::SocketAddrV4;
use std::time::Duration;

/// Captured bytes per packet at most; every packet we write fits (IPv4 total length).
const SNAPLEN: u32 = 65_535;
const IPV4_HEADER_LEN: usize = 20;
const UDP_HEADER_LEN: usize = 8;
const IP_PROTO_UDP: u8 = 17;
const IP_PROTO_TCP: u8 = 6;
const TTL: u8 = 64;
/// The Don't Fragment flag in the flags/fragment-offset field: QUIC sets DF (RFC 9000 §14).
const FLAG_DF: u16 = 0x4000;

/// Writes a classic pcap (microsecond timestamps, LINKTYPE_RAW = 101: IPv4 packets)
/// through the `pcap-file` crate; the IPv4/UDP headers inside are built here.
///
/// All fields are little-endian regardless of host, so the same run gives the same
/// bytes on every machine.
pub struct PcapWriter<W: Write> {
    w: pcap_file::pcap::PcapWriter<W>,
    /// The IPv4 identification of the next packet; increments per packet (wrapping), as
    /// a host's counter would, so Wireshark shows distinct packets.
    next_id: u16,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header.
    pub fn new(writer: W) -> io::Result<Self> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::MicroSecond,
            endianness: Endianness::Little,
        };
        Ok(PcapWriter {
            w: pcap_file::pcap::PcapWriter::with_header(writer, header).map_err(io_error)?,
            next_id: 0,
        })
    }

    /// Appends one UDP datagram from `src` to `dst` at simulated time `at`, wrapped in
    /// an IPv4 header (with a valid header checksum; `ecn` in the TOS byte's low bits,
    /// the rest 0) and a UDP header (checksum valid).
    ///
    /// Errors (nothing is written): `InvalidInput` when the payload does not fit one
    /// IPv4 packet, or when `at` is past the 32-bit seconds of classic pcap.
    pub fn write_udp(
        &mut self,
        at: Instant,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        ecn: Ecn,
        payload: &[u8],
    ) -> io::Result<()> {
        let total = IPV4_HEADER_LEN + UDP_HEADER_LEN + payload.len();
        let total16 = u16::try_from(total).map_err(|_| {
            invalid(format!(
                "UDP payload of {} bytes does not fit an IPv4 packet",
                payload.len()
            ))
        })?;
        let mut packet = Vec::with_capacity(total);
        packet.extend_from_slice(&ipv4_header(self.next_id, total16, src, dst, ecn));
        packet.extend_from_slice(&udp_header(src, dst, payload));
        packet.extend_from_slice(payload);
        self.write_packet(at, &packet)
    }

    /// Appends one TCP segment (header and data, checksum already set by its sender,
    /// quiclab-tcp) from `src` to `dst` at `at`, wrapped in an IPv4 header (`ecn` in its
    /// TOS byte). Errors as
    /// [`write_udp`](Self::write_udp).
    pub fn write_tcp(
        &mut self,
        at: Instant,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        ecn: Ecn,
        segment: &[u8],
    ) -> io::Result<()> {
        let total = IPV4_HEADER_LEN + segment.len();
        let total16 = u16::try_from(total).map_err(|_| {
            invalid(format!(
                "TCP segment of {} bytes does not fit an IPv4 packet",
                segment.len()
            ))
        })?;
        let mut ip = ipv4_header(self.next_id, total16, src, dst, ecn);
        ip[9] = IP_PROTO_TCP;
        ip[10..12].copy_from_slice(&[0, 0]);
        let sum = fold(ones_sum(0, &ip));
        ip[10..12].copy_from_slice(&(!sum).to_be_bytes());
        let mut packet = Vec::with_capacity(total);
        packet.extend_from_slice(&ip);
        packet.extend_from_slice(segment);
        self.write_packet(at, &packet)
    }

    /// Appends one whole IPv4 packet as it was read (headers included), at `at`: the
    /// shell's captures (`quiclab shell`), whose packets come from real stacks.
    /// Errors: `InvalidInput` when longer than an IPv4 packet can be, or `at` is past
    /// classic pcap's 32-bit seconds.
    pub fn write_ip(&mut self, at: Instant, packet: &[u8]) -> io::Result<()> {
        if packet.len() > usize::from(u16::MAX) {
            return Err(invalid(format!(
                "{} bytes do not fit an IPv4 packet",
                packet.len()
            )));
        }
        self.write_packet(at, packet)
    }

    /// Appends one record holding the whole IPv4 `packet`, captured at `at`.
    fn write_packet(&mut self, at: Instant, packet: &[u8]) -> io::Result<()> {
        let (secs, micros) = timestamp(at)?;
        let ts = Duration::new(u64::from(secs), micros * 1000);
        // Every caller's packet fits 16 bits (checked above), so the length fits u32.
        let len = u32::try_from(packet.len()).map_err(|e| invalid(e.to_string()))?;
        self.w
            .write_packet(&PcapPacket::new(ts, len, packet))
            .map_err(io_error)?;
        self.next_id = self.next_id.wrapping_add(1);
        Ok(())
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> W {
        let mut w = self.w.into_writer();
        // A flush error resurfaces on the writer's next use; the signature has no Result.
        let _ = w.flush();
        w
    }
}

/// Writes NSS key-log lines (SSLKEYLOGFILE format, e.g. `MemoryKeyLog::lines`), one
/// per line, for Wireshark's `tls.keylog_file` preference.
pub fn write_key_log<W: Write>(mut writer: W, lines: &[String]) -> io::Result<()> {
    for line in lines {
        writer.write_all(line.as_bytes())?;
        writer.write_all(b"\n")?;
    }
    writer.flush()
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// The crate's error as an `io::Error`: its I/O errors as they are, the rest (a field
/// out of range) as `InvalidInput`.
fn io_error(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => invalid(other.to_string()),
    }
}

/// Classic pcap's (seconds, microseconds) of simulated time; sub-microsecond parts are
/// truncated, so packets within one microsecond keep their file order.
fn timestamp(at: Instant) -> io::Result<(u32, u32)> {
    let nanos = at.as_nanos();
    let secs = u32::try_from(nanos / 1_000_000_000)
        .map_err(|_| invalid(format!("time {at} is past classic pcap's 32-bit seconds")))?;
    let micros = ((nanos % 1_000_000_000) / 1_000) as u32;
    Ok((secs, micros))
}

/// An IPv4 header without options (RFC 791), checksum filled in.
fn ipv4_header(
    id: u16,
    total_len: u16,
    src: SocketAddrV4,
    dst: SocketAddrV4,
    ecn: Ecn,
) -> [u8; 20] {
    let mut h = [0u8; IPV4_HEADER_LEN];
    h[0] = 0x45; // version 4, IHL 5 words
    h[1] = ecn.bits(); // DSCP 0; ECN codepoint (RFC 3168 §5): 0 when not-ECT
    h[2..4].copy_from_slice(&total_len.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6..8].copy_from_slice(&FLAG_DF.to_be_bytes());
    h[8] = TTL;
    h[9] = IP_PROTO_UDP;
    h[12..16].copy_from_slice(&src.ip().octets());
    h[16..20].copy_from_slice(&dst.ip().octets());
    let sum = fold(ones_sum(0, &h));
    h[10..12].copy_from_slice(&(!sum).to_be_bytes());
    h
}

/// A UDP header (RFC 768) with its checksum over the IPv4 pseudo-header, header and
/// payload. The caller has checked that the length fits 16 bits.
fn udp_header(src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) -> [u8; 8] {
    let len = (UDP_HEADER_LEN + payload.len()) as u16;
    let mut h = [0u8; UDP_HEADER_LEN];
    h[0..2].copy_from_slice(&src.port().to_be_bytes());
    h[2..4].copy_from_slice(&dst.port().to_be_bytes());
    h[4..6].copy_from_slice(&len.to_be_bytes());
    let mut pseudo = [0u8; 12];
    pseudo[0..4].copy_from_slice(&src.ip().octets());
    pseudo[4..8].copy_from_slice(&dst.ip().octets());
    pseudo[9] = IP_PROTO_UDP;
    pseudo[10..12].copy_from_slice(&len.to_be_bytes());
    let sum = ones_sum(ones_sum(ones_sum(0, &pseudo), &h), payload);
    let checksum = !fold(sum);
    // RFC 768: a computed zero is sent as all ones (zero means "no checksum").
    let checksum = if checksum == 0 { 0xffff } else { checksum };
    h[6..8].copy_from_slice(&checksum.to_be_bytes());
    h
}

/// Adds `data` as big-endian 16-bit words (odd tail padded with zero) to `acc`; every
/// piece but the last must have even length, which the fixed-size headers do.
fn ones_sum(acc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(2);
    let mut acc = acc;
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds the carries of a one's-complement sum into 16 bits.
fn fold(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn addrs() -> (SocketAddrV4, SocketAddrV4) {
        (
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40000),
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 443),
        )
    }

    /// An independent RFC 1071 checksum: a plain byte-pair loop with u32 carries,
    /// written differently from the code under test.
    fn rfc1071(bytes: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        let mut i = 0;
        while i < bytes.len() {
            let hi = u32::from(bytes[i]) << 8;
            let lo = bytes.get(i + 1).copied().map_or(0, u32::from);
            sum += hi | lo;
            sum = (sum & 0xffff) + (sum >> 16);
            i += 2;
        }
        !(sum as u16)
    }

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }
    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn global_header_layout() {
        let w = PcapWriter::new(Vec::new()).unwrap();
        let out = w.into_inner();
        assert_eq!(
            out,
            [
                0xd4, 0xc3, 0xb2, 0xa1, // magic, little-endian
                2, 0, 4, 0, // version 2.4
                0, 0, 0, 0, 0, 0, 0, 0, // thiszone, sigfigs
                0xff, 0xff, 0, 0, // snaplen 65535
                101, 0, 0, 0, // LINKTYPE_RAW
            ]
        );
    }

    #[test]
    fn record_headers_checksums_and_timestamp() {
        let (src, dst) = addrs();
        // Odd length, so the UDP checksum pads the last byte.
        let payload: Vec<u8> = (0..=200u8).collect();
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let at = Instant::from_nanos(3_250_001_999); // 3 s, 250001 us (ns truncated)
        w.write_udp(at, src, dst, Ecn::NotEct, &payload).unwrap();
        w.write_udp(Instant::ZERO, dst, src, Ecn::Ce, b"").unwrap();
        let out = w.into_inner();

        let rec = &out[24..];
        let total = 20 + 8 + payload.len();
        assert_eq!(le32(rec, 0), 3, "seconds");
        assert_eq!(le32(rec, 4), 250_001, "microseconds");
        assert_eq!(le32(rec, 8) as usize, total, "incl_len");
        assert_eq!(le32(rec, 12) as usize, total, "orig_len");

        let ip = &rec[16..36];
        assert_eq!(ip[0], 0x45);
        assert_eq!(ip[1], 0);
        assert_eq!(be16(ip, 2) as usize, total);
        assert_eq!(be16(ip, 4), 0, "first identification");
        assert_eq!(be16(ip, 6), 0x4000, "DF, offset 0");
        assert_eq!(ip[8], 64);
        assert_eq!(ip[9], 17);
        assert_eq!(&ip[12..16], &[10, 0, 0, 1]);
        assert_eq!(&ip[16..20], &[10, 0, 0, 2]);
        let mut zeroed = ip.to_vec();
        zeroed[10] = 0;
        zeroed[11] = 0;
        assert_eq!(be16(ip, 10), rfc1071(&zeroed), "IPv4 header checksum");
        assert_eq!(rfc1071(ip), 0, "a valid header sums to zero");

        let udp = &rec[36..44];
        assert_eq!(be16(udp, 0), 40000);
        assert_eq!(be16(udp, 2), 443);
        assert_eq!(be16(udp, 4) as usize, 8 + payload.len());
        let mut pseudo = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 17];
        pseudo.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        let mut zeroed = udp.to_vec();
        zeroed[6] = 0;
        zeroed[7] = 0;
        let expected = [pseudo.clone(), zeroed, payload.clone()].concat();
        assert_eq!(be16(udp, 6), rfc1071(&expected), "UDP checksum");
        assert_eq!(&rec[44..44 + payload.len()], payload.as_slice());

        // The second record: identification incremented, reversed addresses, empty payload.
        let rec2 = &rec[16 + total..];
        assert_eq!(rec2.len(), 16 + 28);
        assert_eq!((le32(rec2, 0), le32(rec2, 4)), (0, 0));
        let ip2 = &rec2[16..36];
        assert_eq!(be16(ip2, 4), 1, "identification increments");
        assert_eq!(ip2[1], 0b11, "CE in the TOS byte");
        assert_eq!(&ip2[12..16], &[10, 0, 0, 2]);
        assert_eq!(rfc1071(ip2), 0);
        let udp2 = &rec2[36..44];
        assert_eq!(
            (be16(udp2, 0), be16(udp2, 2), be16(udp2, 4)),
            (443, 40000, 8)
        );
        let whole = [vec![10, 0, 0, 2, 10, 0, 0, 1, 0, 17, 0, 8], udp2.to_vec()].concat();
        assert_eq!(rfc1071(&whole), 0, "a valid UDP checksum sums to zero");
    }

    #[test]
    fn zero_udp_checksum_is_sent_as_all_ones() {
        // Find a payload whose checksum computes to zero: the sum before inversion must
        // be 0xffff, so pick the two bytes that complete it.
        let (src, dst) = addrs();
        let base = fold(ones_sum(
            ones_sum(
                0,
                &[
                    10, 0, 0, 1, 10, 0, 0, 2, 0, 17, 0, 10, 0x9c, 0x40, 0x01, 0xbb,
                ],
            ),
            &[0, 10],
        ));
        let word = 0xffff - base;
        let h = udp_header(src, dst, &word.to_be_bytes());
        assert_eq!(be16(&h, 6), 0xffff);
    }

    #[test]
    fn errors_are_returned_not_panics() {
        let (src, dst) = addrs();
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let big = vec![0u8; 65_535 - 28 + 1];
        let e = w
            .write_udp(Instant::ZERO, src, dst, Ecn::NotEct, &big)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let e = w
            .write_udp(Instant::MAX, src, dst, Ecn::NotEct, b"x")
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        // The largest payload that fits is accepted; nothing was written by the failures.
        w.write_udp(Instant::ZERO, src, dst, Ecn::Ect0, &big[1..])
            .unwrap();
        assert_eq!(w.into_inner().len(), 24 + 16 + 65_535);

        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        assert!(PcapWriter::new(Broken).is_err());
    }

    #[test]
    fn key_log_lines() {
        let mut out = Vec::new();
        write_key_log(&mut out, &["A 01 02".to_string(), "B 03 04".to_string()]).unwrap();
        assert_eq!(out, b"A 01 02\nB 03 04\n");
    }
}
