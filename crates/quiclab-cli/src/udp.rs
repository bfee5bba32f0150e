//! The UDP socket of the real-UDP driver: a non-blocking mio socket with `quinn-udp`'s
//! offloads (GSO on send, GRO on receive, ECN and destination-address control
//! messages), and socket buffers sized for the path (seed 004: the defaults, ~208 KiB,
//! overflow on a fast loopback and lose packets before QUIC sees them).
//!
//! # Call contract
//! [`Socket::bind`] once; then [`Socket::send`] (returns `WouldBlock` when the kernel
//! send buffer is full: keep the batch and retry once writable) and [`Socket::recv`]
//! (fills the caller's preallocated buffers; `WouldBlock` when nothing is queued).

use anyhow::{Context, Result};
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;

/// Socket buffer size asked for by default, each way: 8 MiB holds a 100 Mbit/s x 600 ms
/// path (or a loopback burst of ~6,000 full datagrams). `--socket-buffer` overrides it.
pub const DEFAULT_BUFFER: usize = 8 << 20;

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
}

impl Socket {
    /// Binds `addr` and asks for `buffer` bytes of socket buffer each way. The kernel
    /// caps the request at `net.core.{r,w}mem_max`; when it does, the privileged
    /// SO_{RCV,SND}BUFFORCE is tried, and what was granted is reported either way.
    pub fn bind(addr: SocketAddr, buffer: usize) -> Result<Socket> {
        let io = mio::net::UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
        let state = UdpSocketState::new((&io).into()).context("UDP socket offloads")?;
        let sock = socket2::SockRef::from(&io);
        // Errors here leave the default size, which `granted` then reports.
        let _ = sock.set_send_buffer_size(buffer);
        let _ = sock.set_recv_buffer_size(buffer);
        force_buffers(&io, buffer);
        let granted = Granted {
            send_buffer: sock.send_buffer_size().unwrap_or(0),
            recv_buffer: sock.recv_buffer_size().unwrap_or(0),
            gso_segments: state.max_gso_segments(),
            gro_segments: state.gro_segments(),
        };
        Ok(Socket { io, state, granted })
    }

    pub fn granted(&self) -> Granted {
        Granted {
            // GSO can be turned off at run time when the kernel refuses it.
            gso_segments: self.state.max_gso_segments(),
            ..self.granted
        }
    }

    /// The mio source, to register with a poll.
    pub fn source(&mut self) -> &mut mio::net::UdpSocket {
        &mut self.io
    }

    /// Sends one batch: `contents` is `segment_size`-byte datagrams back to back, the
    /// last possibly shorter (one `sendmsg` with UDP_SEGMENT). Errors other than
    /// `WouldBlock` are datagrams lost (quinn-udp logs them), which QUIC recovers from.
    pub fn send(
        &self,
        destination: SocketAddr,
        contents: &[u8],
        segment_size: usize,
    ) -> io::Result<()> {
        let transmit = Transmit {
            destination,
            ecn: None,
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

    /// Receives up to `bufs.len()` (coalesced) datagrams; returns how many `meta`s are set.
    pub fn recv(&self, bufs: &mut [IoSliceMut<'_>], meta: &mut [RecvMeta]) -> io::Result<usize> {
        self.state.recv((&self.io).into(), bufs, meta)
    }
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

/// Linux: past `rmem_max`/`wmem_max`, a privileged process may still force the size.
#[cfg(target_os = "linux")]
fn force_buffers(io: &mio::net::UdpSocket, buffer: usize) {
    use std::os::fd::AsRawFd;
    let fd = io.as_raw_fd();
    // The kernel doubles the value it is given (for its bookkeeping); ask for half.
    let half = libc::c_int::try_from(buffer / 2).unwrap_or(libc::c_int::MAX);
    for opt in [libc::SO_SNDBUFFORCE, libc::SO_RCVBUFFORCE] {
        // SAFETY: a valid fd and a c_int option value of the right length.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                std::ptr::from_ref(&half).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn force_buffers(_: &mio::net::UdpSocket, _: usize) {}
