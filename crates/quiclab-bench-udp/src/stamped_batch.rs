//! Batched receive with the kernel's receive timestamps: one `recvmmsg` reads up to N
//! datagrams, each with its SO_TIMESTAMPNS stamp (CLOCK_REALTIME, taken on loopback as
//! the sender hands the datagram to the loopback device; see `stamp.rs`). For a
//! receiver that must keep up with ~100,000 datagrams a second without real-time
//! priority and without its own wake-up entering the measurement (`emulate.rs`).
//!
//! # Call contract
//! [`enable_timestamps`] on the socket once (before traffic arrives); then [`RecvBatch::recv`] (blocking, up to
//! the socket's read timeout) and [`RecvBatch::get`] for each of the `n` it returned.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Room for the control messages of one datagram (a timespec and then some), in u64s
/// so the buffer is aligned for `cmsghdr`.
const CONTROL_WORDS: usize = 8;

/// Asks the kernel for SO_TIMESTAMPNS on `sock`, and for a receive buffer of `buffer`
/// bytes (SO_RCVBUFFORCE when privileged; a refusal leaves the default, and overflows
/// then show as datagrams not received).
pub fn enable_timestamps(sock: &UdpSocket, buffer: usize) -> std::io::Result<()> {
    let size = libc::c_int::try_from(buffer).unwrap_or(libc::c_int::MAX);
    let _ = set_int(sock, libc::SO_RCVBUFFORCE, size);
    set_int(sock, libc::SO_TIMESTAMPNS, 1)
}

fn set_int(sock: &UdpSocket, opt: libc::c_int, v: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a valid fd and a c_int option value of the right length.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            std::ptr::from_ref(&v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Buffers for one `recvmmsg` and what it read.
pub struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    control: Vec<[u64; CONTROL_WORDS]>,
    lens: Vec<usize>,
    stamps: Vec<Option<u64>>,
}

impl RecvBatch {
    /// Room for `n` datagrams of up to `size` bytes.
    pub fn new(n: usize, size: usize) -> RecvBatch {
        RecvBatch {
            bufs: vec![vec![0; size]; n],
            control: vec![[0; CONTROL_WORDS]; n],
            lens: vec![0; n],
            stamps: vec![None; n],
        }
    }

    /// Waits for at least one datagram (MSG_WAITFORONE) and reads what is queued, up to
    /// the batch's size; returns how many. Errors: the socket's (a read timeout is
    /// `WouldBlock`).
    pub fn recv(&mut self, sock: &UdpSocket) -> std::io::Result<usize> {
        let n = self.bufs.len();
        let mut iovs: Vec<libc::iovec> = self
            .bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: zeroed mmsghdrs are valid; their pointers are set to live buffers
        // (`iovs`, `self.control`) that outlive the call.
        let mut msgs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (i, m) in msgs.iter_mut().enumerate() {
            m.msg_hdr.msg_iov = &mut iovs[i];
            m.msg_hdr.msg_iovlen = 1;
            m.msg_hdr.msg_control = self.control[i].as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = std::mem::size_of::<[u64; CONTROL_WORDS]>() as _;
        }
        // SAFETY: recvmmsg into `msgs`, whose buffers are all alive for the call.
        let r = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                msgs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let got = r as usize;
        for (i, m) in msgs.iter().enumerate().take(got) {
            self.lens[i] = m.msg_len as usize;
            self.stamps[i] = timestamp(&m.msg_hdr);
        }
        Ok(got)
    }

    /// Datagram `i` of the last [`RecvBatch::recv`] and its kernel timestamp (ns,
    /// CLOCK_REALTIME), if it had one.
    pub fn get(&self, i: usize) -> (&[u8], Option<u64>) {
        (&self.bufs[i][..self.lens[i]], self.stamps[i])
    }
}

/// The SCM_TIMESTAMPNS control message of a received message, in ns.
fn timestamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walking the control messages the kernel wrote into the message's control
    // buffer, reading the timestamp payload unaligned as the timespec it is.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if ((*c).cmsg_level, (*c).cmsg_type) == (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS) {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
