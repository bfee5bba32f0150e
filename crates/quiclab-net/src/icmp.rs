//! ICMP errors on the client's UDP socket (Linux `IP_RECVERR`, ip(7)). An
//! unconnected UDP socket never hears that a datagram it sent met a closed port unless
//! it asks: with the option on, the kernel queues each ICMP error with the address the
//! failed datagram was sent to, and flags the socket (EPOLLERR) until the queue is read
//! with `MSG_ERRQUEUE`. The client uses it to give up at once on a server port where
//! nothing listens, instead of retrying until its handshake timeout.

use std::net::SocketAddr;

/// Asks the kernel to queue ICMP errors for datagrams `socket` sends (IPv4 and IPv6;
/// a family the socket is not of refuses its option, which is harmless). Returns
/// whether either took.
#[cfg(target_os = "linux")]
pub fn enable(socket: &mio::net::UdpSocket) -> bool {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    let set = |level, name| {
        // SAFETY: a valid fd and a c_int option value of the right length.
        unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                level,
                name,
                std::ptr::from_ref(&on).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            ) == 0
        }
    };
    let v4 = set(libc::SOL_IP, libc::IP_RECVERR);
    let v6 = set(libc::SOL_IPV6, libc::IPV6_RECVERR);
    v4 || v6
}

#[cfg(not(target_os = "linux"))]
pub fn enable(_: &mio::net::UdpSocket) -> bool {
    false
}

/// Reads the socket's error queue until it is empty; returns the destinations whose
/// datagrams met a closed port (ICMP or ICMPv6 port unreachable: `ECONNREFUSED`).
/// Other errors (host unreachable, message too big) are read and left to QUIC's own
/// loss recovery and path MTU discovery.
#[cfg(target_os = "linux")]
pub fn take_refused(socket: &mio::net::UdpSocket) -> Vec<SocketAddr> {
    let mut refused = Vec::new();
    while let Some(error) = read_error(socket) {
        if let Some(destination) = error {
            if !refused.contains(&destination) {
                refused.push(destination);
            }
        }
    }
    refused
}

#[cfg(not(target_os = "linux"))]
pub fn take_refused(_: &mio::net::UdpSocket) -> Vec<SocketAddr> {
    Vec::new()
}

/// One message off the error queue: `None` when it is empty, `Some(Some(addr))` for a
/// port unreachable for a datagram sent to `addr`, `Some(None)` for anything else.
#[cfg(target_os = "linux")]
fn read_error(socket: &mio::net::UdpSocket) -> Option<Option<SocketAddr>> {
    use std::os::fd::AsRawFd;
    // SAFETY: zeroed plain C structs; recvmsg writes within the lengths given, and the
    // control messages are walked with the kernel's CMSG macros over that buffer.
    unsafe {
        let mut name: libc::sockaddr_storage = std::mem::zeroed();
        let mut control = [0u64; 64]; // 512 bytes, aligned for cmsghdr
        let mut payload = [0u8; 64]; // the quoted datagram is not needed
        let mut iov = libc::iovec {
            iov_base: payload.as_mut_ptr().cast(),
            iov_len: payload.len(),
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = std::ptr::from_mut(&mut name).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
        if libc::recvmsg(socket.as_raw_fd(), &mut msg, flags) < 0 {
            return None; // EAGAIN: the queue is empty
        }
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let c = &*cmsg;
            let ours = (c.cmsg_level, c.cmsg_type) == (libc::SOL_IP, libc::IP_RECVERR)
                || (c.cmsg_level, c.cmsg_type) == (libc::SOL_IPV6, libc::IPV6_RECVERR);
            if ours {
                let err = std::ptr::read_unaligned(
                    libc::CMSG_DATA(cmsg).cast::<libc::sock_extended_err>(),
                );
                let icmp = matches!(
                    err.ee_origin,
                    libc::SO_EE_ORIGIN_ICMP | libc::SO_EE_ORIGIN_ICMP6
                );
                if icmp && err.ee_errno == libc::ECONNREFUSED as u32 {
                    return Some(socket_addr(&name));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        Some(None)
    }
}

/// The address in a `sockaddr_storage` the kernel filled (IPv4 or IPv6).
#[cfg(target_os = "linux")]
fn socket_addr(name: &libc::sockaddr_storage) -> Option<SocketAddr> {
    use std::net::{SocketAddrV4, SocketAddrV6};
    // SAFETY: the family field says which struct the storage holds; both fit in it.
    unsafe {
        match libc::c_int::from(name.ss_family) {
            libc::AF_INET => {
                let a = &*std::ptr::from_ref(name).cast::<libc::sockaddr_in>();
                let ip = u32::from_be(a.sin_addr.s_addr).into();
                Some(SocketAddrV4::new(ip, u16::from_be(a.sin_port)).into())
            }
            libc::AF_INET6 => {
                let a = &*std::ptr::from_ref(name).cast::<libc::sockaddr_in6>();
                let ip = a.sin6_addr.s6_addr.into();
                let port = u16::from_be(a.sin6_port);
                let v6 = SocketAddrV6::new(ip, port, a.sin6_flowinfo, a.sin6_scope_id);
                // A v4-mapped destination on a dual-stack socket is the IPv4 peer.
                Some(match v6.ip().to_ipv4_mapped() {
                    Some(v4) => SocketAddrV4::new(v4, port).into(),
                    None => v6.into(),
                })
            }
            _ => None,
        }
    }
}
