//! Which local interface holds an address (getifaddrs): the MTU default (`mtu.rs`) and
//! the SO_TXTIME probe (`txtime.rs`) both read the interface's files by its name.

use std::net::IpAddr;

/// The name of the interface `ip` is configured on; `None` when no interface holds it
/// or the list cannot be read (and off Linux).
#[cfg(target_os = "linux")]
pub fn name_of(ip: IpAddr) -> Option<String> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() && found.is_none() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        // SAFETY: a non-null ifa_addr points to a sockaddr of the family it names.
        if unsafe { sockaddr_ip(ifa.ifa_addr) } == Some(ip) {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found
}

#[cfg(not(target_os = "linux"))]
pub fn name_of(_: IpAddr) -> Option<String> {
    None
}

/// The IP address of an AF_INET / AF_INET6 sockaddr.
///
/// # Safety
/// `sa` is null or points to a sockaddr whose family field tells its real type.
#[cfg(target_os = "linux")]
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let v4 = &*sa.cast::<libc::sockaddr_in>();
            Some(IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes()))
        }
        libc::AF_INET6 => {
            let v6 = &*sa.cast::<libc::sockaddr_in6>();
            Some(IpAddr::from(v6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_address_is_on_lo() {
        if cfg!(target_os = "linux") {
            assert_eq!(name_of("127.0.0.1".parse().unwrap()).as_deref(), Some("lo"));
        }
        assert_eq!(name_of("0.0.0.0".parse().unwrap()), None);
    }
}
