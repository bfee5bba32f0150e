//! Just enough rtnetlink to name a device's qdiscs (for the SO_TXTIME report in
//! [`crate::txtime`]): one RTM_GETQDISC dump, parsed from bytes (no external tool,
//! no privilege needed).

use std::io;

const NLMSG_HDR: usize = 16;
const TCMSG: usize = 20;
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;
const RTM_NEWQDISC: u16 = 36;
const TC_H_ROOT: u32 = 0xFFFF_FFFF;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The kinds (`fq`, `noqueue`, `mq`, ...) of the qdiscs on interface `ifindex`, the
/// root first.
pub fn qdisc_kinds(ifindex: i32) -> io::Result<Vec<String>> {
    // SAFETY: plain syscall; the fd is closed by `Fd` below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = Fd(fd);
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: a valid fd and a timeval of the right length.
    unsafe {
        libc::setsockopt(
            fd.0,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            std::ptr::from_ref(&timeout).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let mut req = Vec::with_capacity(NLMSG_HDR + TCMSG);
    req.extend_from_slice(&((NLMSG_HDR + TCMSG) as u32).to_ne_bytes());
    req.extend_from_slice(&libc::RTM_GETQDISC.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    req.extend_from_slice(&flags.to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    req.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
    req.extend_from_slice(&[libc::AF_UNSPEC as u8, 0, 0, 0]);
    req.extend_from_slice(&ifindex.to_ne_bytes());
    req.extend_from_slice(&[0; 12]); // handle, parent, info
                                     // SAFETY: sending our buffer on a valid fd.
    if unsafe { libc::send(fd.0, req.as_ptr().cast(), req.len(), 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut kinds = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: receiving into our buffer on a valid fd.
        let n = unsafe { libc::recv(fd.0, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 || parse(&buf[..n as usize], ifindex, &mut kinds) {
            return Ok(kinds);
        }
    }
}

/// Reads one receive's messages into `kinds`; whether the dump is over.
fn parse(mut b: &[u8], ifindex: i32, kinds: &mut Vec<String>) -> bool {
    while let (Some(len), Some(ty)) = (u32_at(b, 0), u16_at(b, 4)) {
        let len = len as usize;
        if len < NLMSG_HDR || len > b.len() {
            return true;
        }
        match ty {
            NLMSG_DONE | NLMSG_ERROR => return true,
            RTM_NEWQDISC => {
                let msg = &b[NLMSG_HDR..len];
                let same = u32_at(msg, 4).map(|i| i as i32) == Some(ifindex);
                if let (true, Some(kind)) = (same, kind_of(msg)) {
                    if u32_at(msg, 12) == Some(TC_H_ROOT) {
                        kinds.insert(0, kind);
                    } else {
                        kinds.push(kind);
                    }
                }
            }
            _ => {}
        }
        b = b.get(align4(len)..).unwrap_or(&[]);
    }
    false
}

/// The TCA_KIND attribute after a tcmsg.
fn kind_of(msg: &[u8]) -> Option<String> {
    let mut at = TCMSG;
    while let (Some(len), Some(ty)) = (u16_at(msg, at), u16_at(msg, at + 2)) {
        let len = len as usize;
        if len < 4 {
            return None;
        }
        if ty == libc::TCA_KIND {
            let value = msg.get(at + 4..at + len)?;
            let end = value.iter().position(|&c| c == 0).unwrap_or(value.len());
            return Some(String::from_utf8_lossy(&value[..end]).into_owned());
        }
        at += align4(len);
    }
    None
}

/// Closes the fd on drop.
struct Fd(libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing the fd this value owns.
        unsafe { libc::close(self.0) };
    }
}
