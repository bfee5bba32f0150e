//! A UDP relay between a QUIC client and server on loopback that records when each of
//! the server's datagrams left it: the kernel's receive timestamp (SO_TIMESTAMPNS) on
//! the relay's server-facing socket. On loopback that stamp is taken as the sender's
//! `sendmsg` hands the packet to the loopback device (netif_rx, before any queueing to
//! the relay's thread), so it is the departure time to within the loopback path, and
//! it does not depend on when the relay's thread gets a CPU. The relay's own overflow
//! count (SO_RXQ_OVFL) says whether any departure went unseen.
//!
//! Why this and not the alternatives: the server's qlog `packet_sent` times are the
//! loop's `now` before `sendmsg`, not departures; an AF_PACKET capture on `lo` needs
//! CAP_NET_RAW and sees GSO batches as one super-packet to be split by hand.

use anyhow::{Context, Result};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

/// One datagram from the server: kernel receive time (ns, CLOCK_REALTIME) and length.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    pub ns: u64,
    pub len: usize,
}

/// What the relay saw.
pub struct Capture {
    pub departures: Vec<Departure>,
    /// Datagrams the kernel dropped on the relay's server-facing socket (SO_RXQ_OVFL).
    pub relay_drops: u32,
    /// Datagrams without a timestamp (none expected).
    pub unstamped: usize,
}

/// A running relay: the client talks to `front`, the relay to the server.
pub struct Relay {
    pub front: SocketAddr,
    stop: Arc<AtomicBool>,
    down: JoinHandle<Capture>,
    up: JoinHandle<()>,
}

fn set_int(fd: i32, opt: libc::c_int, v: libc::c_int) -> std::io::Result<()> {
    // SAFETY: a valid fd and a c_int option value of the right length.
    let r = unsafe {
        libc::setsockopt(
            fd,
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

impl Relay {
    /// Starts relaying between a new loopback port and `server`.
    pub fn start(server: SocketAddr) -> Result<Relay> {
        let front = UdpSocket::bind("127.0.0.1:0")?;
        let back = UdpSocket::bind("127.0.0.1:0")?;
        back.connect(server)?;
        let fd = back.as_raw_fd();
        set_int(fd, libc::SO_TIMESTAMPNS, 1).context("SO_TIMESTAMPNS")?;
        set_int(fd, libc::SO_RXQ_OVFL, 1).context("SO_RXQ_OVFL")?;
        for (s, opt) in [
            (&back, libc::SO_RCVBUFFORCE),
            (&front, libc::SO_RCVBUFFORCE),
            (&back, libc::SO_SNDBUFFORCE),
            (&front, libc::SO_SNDBUFFORCE),
        ] {
            // 8 MiB granted when privileged; otherwise the default stays (drops then
            // show in `relay_drops`).
            let _ = set_int(s.as_raw_fd(), opt, 4 << 20);
        }
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(50)))?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let client: Arc<OnceLock<SocketAddr>> = Arc::new(OnceLock::new());
        let addr = front.local_addr()?;
        let (front2, back2) = (front.try_clone()?, back.try_clone()?);
        let (s1, s2, c1) = (stop.clone(), stop.clone(), client.clone());
        let down = std::thread::spawn(move || down_loop(&back2, &front2, &c1, &s1));
        let up = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s2.load(Ordering::Relaxed) {
                if let Ok((n, from)) = front.recv_from(&mut buf) {
                    let _ = client.set(from);
                    let _ = back.send(&buf[..n]);
                }
            }
        });
        Ok(Relay {
            front: addr,
            stop,
            down,
            up,
        })
    }

    /// Stops both directions; what the server sent.
    pub fn finish(self) -> Result<Capture> {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.up.join();
        self.down
            .join()
            .map_err(|_| anyhow::anyhow!("relay thread panicked"))
    }
}

/// The stamping thread's real-time priority, above a FIFO server's (10): it must drain
/// its socket while the sender runs, or departures are dropped unseen.
const STAMP_PRIORITY: i32 = 20;

/// Server to client: stamp, record, forward.
fn down_loop(
    back: &UdpSocket,
    front: &UdpSocket,
    client: &OnceLock<SocketAddr>,
    stop: &AtomicBool,
) -> Capture {
    let mut cap = Capture {
        departures: Vec::with_capacity(1 << 20),
        relay_drops: 0,
        unstamped: 0,
    };
    let param = libc::sched_param {
        sched_priority: STAMP_PRIORITY,
    };
    // SAFETY: plain syscall on the calling thread with a valid sched_param; a refusal
    // leaves it in the normal class (drops then show in `relay_drops`).
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, stamp, ovfl)) = recv_stamped(back, &mut buf) else {
            continue;
        };
        if let Some(d) = ovfl {
            cap.relay_drops = d;
        }
        match stamp {
            Some(ns) => cap.departures.push(Departure { ns, len: n }),
            None => cap.unstamped += 1,
        }
        if let Some(c) = client.get() {
            let _ = front.send_to(&buf[..n], c);
        }
    }
    cap
}

/// One `recvmsg`: length, SCM_TIMESTAMPNS (ns) and the SO_RXQ_OVFL count if present.
fn recv_stamped(
    s: &UdpSocket,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<u64>, Option<u32>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // u64s: cmsg buffers must be aligned for cmsghdr.
    let mut control = [0u64; 32];
    // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: recvmsg into the buffers `msg` points to, all alive for the call.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let (mut stamp, mut ovfl) = (None, None);
    // SAFETY: walking the control messages the kernel wrote into `control`, reading
    // each payload unaligned as the type its level and type name.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS) => {
                    let ts: libc::timespec = std::ptr::read_unaligned(data.cast());
                    stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                (libc::SOL_SOCKET, libc::SO_RXQ_OVFL) => {
                    ovfl = Some(std::ptr::read_unaligned(data.cast::<u32>()));
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, stamp, ovfl))
}
