//! Which local interface holds an address (getifaddrs): the MTU default (`mtu.rs`) and
//! the SO_TXTIME probe (`txtime.rs`) both read the interface's files by its name.

use std::net::IpAddr;

/// The name of the interface `ip` is configured on; `None` when no interface holds it
/// or the list cannot be read (and off Linux).
#[cfg(target_os = "linux")]
pub fn name_of(ip: IpAddr) -> Option<String> {
    nix::ifaddrs::getifaddrs()
        .ok()?
        .find(|ifa| ifa.address.as_ref().and_then(address_ip) == Some(ip))
        .map(|ifa| ifa.interface_name)
}

#[cfg(not(target_os = "linux"))]
pub fn name_of(_: IpAddr) -> Option<String> {
    None
}

/// The IP address of an AF_INET / AF_INET6 socket address.
#[cfg(target_os = "linux")]
fn address_ip(addr: &nix::sys::socket::SockaddrStorage) -> Option<IpAddr> {
    addr.as_sockaddr_in()
        .map(|v4| IpAddr::V4(v4.ip()))
        .or_else(|| addr.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
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
