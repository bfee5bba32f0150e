//! The UDP socket of the real-UDP driver: a non-blocking mio socket with `quinn-udp`'s
//! offloads (GSO on send, GRO on receive, ECN and destination-address control
//! messages), and socket buffers sized for the path (seed 004: the defaults, ~208 KiB,
//! overflow on a fast loopback and lose packets before QUIC sees them).
//!
//! # Call contract
//! [`Socket::bind`] once; then [`Socket::send`] (returns `WouldBlock` when the kernel
//! send buffer is full: keep the batch and retry once writable) and [`Socket::recv`]
//! (fills the caller's preallocated buffers; `WouldBlock` when nothing is queued).

use crate::error::{Context, Result};
use quiclab_proto::Ecn;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use std::io::{self, ErrorKind, IoSliceMut};
use std::net::SocketAddr;

/// Socket buffer size asked for by default, each way: 8 MiB holds a 100 Mbit/s x 600 ms
/// path (or a loopback burst of ~6,000 full datagrams). `--socket-buffer` overrides it.
pub const DEFAULT_BUFFER: usize = 8 << 20;

/// The most the driver grows the buffers to by default, each way: 64 MiB holds a
/// 1 Gbit/s x 537 ms path (`--socket-buffer-max`).
pub const DEFAULT_BUFFER_MAX: usize = 64 << 20;

/// What the kernel granted; printed at start so a run's log says what it had.
#[derive(Clone, Copy, Debug)]
pub struct Granted {
    pub send_buffer: usize,
    pub recv_buffer: usize,
    /// Datagrams per `sendmsg` (1 without GSO).
    pub gso_segments: usize,
    /// Datagrams the kernel may coalesce into one receive (1 without GRO).
    pub gro_segments: usize,
}

impl std::fmt::Display for Granted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "socket buffers send {} KiB, recv {} KiB; GSO {} segments, GRO {} segments",
            self.send_buffer >> 10,
            self.recv_buffer >> 10,
            self.gso_segments,
            self.gro_segments
        )
    }
}

/// A bound, non-blocking UDP socket with its offload state.
pub struct Socket {
    io: mio::net::UdpSocket,
    state: UdpSocketState,
    granted: Granted,
    /// Datagrams per `sendmsg` at most, below the kernel's GSO limit (1: no GSO).
    gso_limit: usize,
}

impl Socket {
    /// Binds `addr` and asks for `buffer` bytes of socket buffer each way. The kernel
    /// caps the request at `net.core.{r,w}mem_max`; when it does, the privileged
    /// SO_{RCV,SND}BUFFORCE is tried, and what was granted is reported either way.
    pub fn bind(addr: SocketAddr, buffer: usize) -> Result<Socket> {
        let io = mio::net::UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
        let state = UdpSocketState::new((&io).into()).context("UDP socket offloads")?;
        let mut socket = Socket {
            io,
            granted: Granted {
                send_buffer: 0,
                recv_buffer: 0,
                gso_segments: state.max_gso_segments(),
                gro_segments: state.gro_segments(),
            },
            state,
            gso_limit: usize::MAX,
        };
        socket.resize(Some(buffer), Some(buffer));
        Ok(socket)
    }

    /// Asks for new buffer sizes (`None`: leave that direction), with the privileged
    /// force past the kernel's cap when permitted; returns what was granted.
    pub fn resize(&mut self, send: Option<usize>, recv: Option<usize>) -> Granted {
        let sock = socket2::SockRef::from(&self.io);
        // Errors here leave the size as it was, which `granted` then reports.
        if let Some(b) = send {
            let _ = sock.set_send_buffer_size(b);
            force_buffer(&self.io, libc::SO_SNDBUFFORCE, b);
        }
        if let Some(b) = recv {
            let _ = sock.set_recv_buffer_size(b);
            force_buffer(&self.io, libc::SO_RCVBUFFORCE, b);
        }
        self.granted.send_buffer = sock.send_buffer_size().unwrap_or(0);
        self.granted.recv_buffer = sock.recv_buffer_size().unwrap_or(0);
        self.granted()
    }

    pub fn granted(&self) -> Granted {
        Granted {
            // GSO can be turned off at run time when the kernel refuses it.
            gso_segments: self.state.max_gso_segments().min(self.gso_limit).max(1),
            ..self.granted
        }
    }

    /// Sends one datagram per `sendmsg` from now on (no GSO batches), e.g. so a loopback
    /// capture shows every datagram (the kernel does not split GSO batches on `lo`).
    pub fn disable_gso(&mut self) {
        self.gso_limit = 1;
    }

    /// The address bound (the port the kernel chose for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// The mio source, to register with a poll.
    pub fn source(&mut self) -> &mut mio::net::UdpSocket {
        &mut self.io
    }

    /// Sends one batch: `contents` is `segment_size`-byte datagrams back to back, the
    /// last possibly shorter (one `sendmsg` with UDP_SEGMENT), every one with the ECN
    /// codepoint `ecn` in its IP header (an IP_TOS / IPV6_TCLASS control message; a
    /// batch has one codepoint, so callers split batches where it changes). Errors other
    /// than `WouldBlock` are datagrams lost (quinn-udp logs them), which QUIC recovers from.
    pub fn send(
        &self,
        destination: SocketAddr,
        ecn: Ecn,
        contents: &[u8],
        segment_size: usize,
    ) -> io::Result<()> {
        let transmit = Transmit {
            destination,
            ecn: codepoint_of(ecn),
            contents,
            segment_size: (contents.len() > segment_size).then_some(segment_size),
            src_ip: None,
        };
        self.state.send((&self.io).into(), &transmit)
    }

    /// Datagrams the kernel dropped on this socket since it was opened (receive buffer
    /// full), from the `drops` column of /proc/net/udp{,6}; `None` where there is no
    /// such file. Losses here never reach QUIC's view except as packet loss.
    pub fn kernel_drops(&self) -> Option<u64> {
        kernel_drops(&self.io)
    }

    /// Asks the kernel for the ICMP errors of datagrams this socket sends (a client's:
    /// `icmp.rs`); returns whether it will report them.
    pub fn report_icmp_errors(&self) -> bool {
        crate::icmp::enable(&self.io)
    }

    /// Destinations that answered with ICMP port unreachable since the last call
    /// (empty unless [`Socket::report_icmp_errors`] took).
    pub fn take_refused(&self) -> Vec<SocketAddr> {
        crate::icmp::take_refused(&self.io)
    }

    /// Receives up to `bufs.len()` (coalesced) datagrams; returns how many `meta`s are set.
    pub fn recv(&self, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> io::Result<usize> {
        self.state.recv((&self.io).into(), bufs, meta)
    }
}

/// Errors that mean "nothing now" or a lost packet, not a broken socket.
pub(crate) fn is_transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock
            | ErrorKind::TimedOut
            | ErrorKind::Interrupted
            | ErrorKind::ConnectionRefused
            | ErrorKind::ConnectionReset
    )
}

#[cfg(target_os = "linux")]
fn kernel_drops(io: &mio::net::UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd;
    // SAFETY: fstat on a valid fd into a zeroed stat buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(io.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    let inode = st.st_ino.to_string();
    ["/proc/net/udp", "/proc/net/udp6"].iter().find_map(|f| {
        let table = std::fs::read_to_string(f).ok()?;
        table.lines().skip(1).find_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
            (cols.get(9) == Some(&inode.as_str())).then(|| cols.last()?.parse().ok())?
        })
    })
}

#[cfg(not(target_os = "linux"))]
fn kernel_drops(_: &mio::net::UdpSocket) -> Option<u64> {
    None
}

/// Linux: past `rmem_max`/`wmem_max`, a privileged process may still force the size
/// (`opt`: SO_SNDBUFFORCE or SO_RCVBUFFORCE).
#[cfg(target_os = "linux")]
fn force_buffer(io: &mio::net::UdpSocket, opt: libc::c_int, buffer: usize) {
    use std::os::fd::AsRawFd;
    // The kernel doubles the value it is given (for its bookkeeping); ask for half.
    let half = libc::c_int::try_from(buffer / 2).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid fd and a c_int option value of the right length.
    unsafe {
        libc::setsockopt(
            io.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            std::ptr::from_ref(&half).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn force_buffer(_: &mio::net::UdpSocket, _: i32, _: usize) {}

/// The kernel's caps on unprivileged buffer requests (`net.core.wmem_max`,
/// `net.core.rmem_max`), bytes; `None` where unreadable.
pub fn kernel_caps() -> (Option<usize>, Option<usize>) {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    (read("wmem_max"), read("rmem_max"))
}

/// What a buffer of `bytes` covers, as "the BDP of RATE x DELAY" at 1 Gbit/s (and at
/// 100 Mbit/s when that delay is under 100 ms), e.g. "8 MiB = the BDP of 1 Gbit/s x
/// 67 ms". The kernel charges each queued datagram its buffer's true size (2,304
/// bytes for a 1,200-1,452-byte datagram on Linux 6.x loopback), so a receive buffer
/// holds about half its size in payload of separate datagrams.
pub fn bdp_note(bytes: usize) -> String {
    let delay = |rate_bps: f64| {
        let s = bytes as f64 * 8.0 / rate_bps;
        if s < 1e-3 {
            format!("{:.0} µs", s * 1e6)
        } else {
            format!("{:.0} ms", s * 1e3)
        }
    };
    let size = if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    };
    if (bytes as f64 * 8.0 / 1e9) < 0.1 {
        format!(
            "{size} = the BDP of 1 Gbit/s x {} (100 Mbit/s x {})",
            delay(1e9),
            delay(1e8)
        )
    } else {
        format!("{size} = the BDP of 1 Gbit/s x {}", delay(1e9))
    }
}

impl Socket {
    /// The start-up line about the buffers: the BDP the smaller one covers, and the
    /// kernel's caps when the grant went past them (a privileged force) or stopped at
    /// them (asked more than granted).
    pub fn buffer_note(&self, asked: usize) -> String {
        let g = self.granted;
        let mut note = bdp_note(g.send_buffer.min(g.recv_buffer));
        let (wmax, rmax) = kernel_caps();
        if let (Some(w), Some(r)) = (wmax, rmax) {
            // The kernel reports (and grants) twice what an unprivileged request may set.
            let cap = 2 * w.min(r);
            let how = if g.send_buffer.min(g.recv_buffer) > cap {
                "above them: forced (SO_*BUFFORCE, privileged)"
            } else if asked > g.send_buffer.min(g.recv_buffer) {
                "capped by them (raise them, or run privileged to force)"
            } else {
                "within them"
            };
            note.push_str(&format!(
                "; kernel caps net.core.wmem_max {} KiB, rmem_max {} KiB: {how}",
                w >> 10,
                r >> 10
            ));
        }
        note
    }
}

/// The codepoint a received datagram's IP header carried, as quinn-udp read it
/// (`None` is not-ECT, or a platform that does not report it).
pub(crate) fn ecn_of(ecn: Option<quinn_udp::EcnCodepoint>) -> Ecn {
    match ecn {
        None => Ecn::NotEct,
        Some(quinn_udp::EcnCodepoint::Ect0) => Ecn::Ect0,
        Some(quinn_udp::EcnCodepoint::Ect1) => Ecn::Ect1,
        Some(quinn_udp::EcnCodepoint::Ce) => Ecn::Ce,
    }
}

/// quinn-udp's codepoint to set for `ecn` (`None`: not-ECT, no control message).
fn codepoint_of(ecn: Ecn) -> Option<quinn_udp::EcnCodepoint> {
    match ecn {
        Ecn::NotEct => None,
        Ecn::Ect0 => Some(quinn_udp::EcnCodepoint::Ect0),
        Ecn::Ect1 => Some(quinn_udp::EcnCodepoint::Ect1),
        Ecn::Ce => Some(quinn_udp::EcnCodepoint::Ce),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over loopback, each datagram arrives with the codepoint it was sent with, GSO
    /// batches included (IPv4 and IPv6 where the host has it).
    #[test]
    fn codepoints_cross_loopback() {
        for ip in ["127.0.0.1:0", "[::1]:0"] {
            let addr: SocketAddr = ip.parse().unwrap();
            let Ok(rx) = Socket::bind(addr, 1 << 20) else {
                assert!(addr.is_ipv6(), "IPv4 loopback must bind");
                continue;
            };
            let tx = Socket::bind(addr, 1 << 20).unwrap();
            let to = rx.local_addr().unwrap();
            let sent = [Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::NotEct];
            for (i, &e) in sent.iter().enumerate() {
                // Two 100-byte datagrams per send: a GSO batch where the kernel has GSO.
                tx.send(to, e, &[i as u8; 200], 100).unwrap();
            }
            let mut got = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while got.len() < 2 * sent.len() && std::time::Instant::now() < deadline {
                let mut bufs = [[0u8; 4096]; 4];
                let mut slices = bufs.each_mut().map(|b| IoSliceMut::new(b));
                let mut meta = [RecvMeta::default(); 4];
                match rx.recv(&mut slices, &mut meta) {
                    Ok(n) => {
                        for (m, b) in meta[..n].iter().zip(slices.iter()) {
                            for d in b[..m.len].chunks(m.stride.max(1)) {
                                got.push((d[0], ecn_of(m.ecn)));
                            }
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    Err(e) => panic!("recv: {e}"),
                }
            }
            let expected: Vec<(u8, Ecn)> = sent
                .iter()
                .enumerate()
                .flat_map(|(i, &e)| [(i as u8, e); 2])
                .collect();
            assert_eq!(got, expected, "{ip}");
        }
    }

    #[test]
    fn bdp_notes() {
        assert_eq!(
            bdp_note(8 << 20),
            "8 MiB = the BDP of 1 Gbit/s x 67 ms (100 Mbit/s x 671 ms)"
        );
        assert_eq!(bdp_note(64 << 20), "64 MiB = the BDP of 1 Gbit/s x 537 ms");
        assert_eq!(
            bdp_note(4608),
            "4 KiB = the BDP of 1 Gbit/s x 37 µs (100 Mbit/s x 369 µs)"
        );
    }
}
