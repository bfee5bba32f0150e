//! The largest UDP payload the local interface carries: the default upper bound of
//! PMTU discovery, taken the way TCP takes its MSS from the route's MTU. On loopback
//! (MTU 65536) that is 65507 bytes; on a 1500-byte Ethernet interface 1472 (IPv4) or
//! 1452 (IPv6). Discovery still confirms the size end to end (RFC 9000 §14.3): the
//! interface only bounds the search.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// The largest UDP payload an IP datagram can hold: 65535 minus the IPv4 and UDP
/// headers (also below RFC 9000 §18.2's 65527).
const MAX_UDP_PAYLOAD: u32 = 65_507;

/// The UDP payload an interface MTU leaves for `ip`'s family.
pub fn payload_for(mtu: u32, ip: IpAddr) -> u16 {
    let headers = if ip.is_ipv4() { 20 + 8 } else { 40 + 8 };
    let payload = mtu.saturating_sub(headers).min(MAX_UDP_PAYLOAD);
    u16::try_from(payload).unwrap_or(u16::MAX)
}

/// The MTU of the route to `peer` (the kernel's IP_MTU / IPV6_MTU on a connected
/// socket; nothing is sent). `None` where the kernel cannot say.
pub fn route_mtu(peer: SocketAddr) -> Option<u32> {
    let local: SocketAddr = if peer.is_ipv4() {
        "0.0.0.0:0".parse().ok()?
    } else {
        "[::]:0".parse().ok()?
    };
    let s = UdpSocket::bind(local).ok()?;
    s.connect(peer).ok()?;
    let (level, name) = if peer.is_ipv4() {
        (libc::IPPROTO_IP, libc::IP_MTU)
    } else {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU)
    };
    let mut mtu: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket descriptor, and an int-sized buffer with its length.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0 && mtu > 0).then_some(mtu as u32)
}

/// The MTU of the interface that owns `local` (a listening address); `None` for the
/// unspecified address (any interface) or where it cannot be found.
pub fn interface_mtu(local: IpAddr) -> Option<u32> {
    if local.is_unspecified() {
        return None;
    }
    let name = crate::iface::name_of(local)?;
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/mtu")).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_sizes_by_family() {
        let v4: IpAddr = "192.0.2.1".parse().unwrap();
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(payload_for(1500, v4), 1472);
        assert_eq!(payload_for(1500, v6), 1452);
        assert_eq!(payload_for(65536, v4), 65507);
        assert_eq!(payload_for(9000, v4), 8972);
    }

    #[test]
    fn loopback_is_found_by_address_and_by_route() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let Some(mtu) = interface_mtu(lo) else {
            return; // no /sys or no loopback address here: nothing to check
        };
        assert!(mtu >= 1280, "lo MTU {mtu}");
        // The route may report one less than the device (65535 against 65536 on lo).
        let route = route_mtu("127.0.0.1:9".parse().unwrap()).expect("a route to lo");
        assert_eq!(payload_for(route, lo), payload_for(mtu, lo));
        assert_eq!(interface_mtu("0.0.0.0".parse().unwrap()), None);
    }
}
