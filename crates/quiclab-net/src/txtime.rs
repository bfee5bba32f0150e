//! Whether the kernel could time departures itself (SO_TXTIME, earliest departure time):
//! probed at start and reported next to the wake-up choice (issue 13: "SO_TXTIME / EDT
//! where the kernel and qdisc allow, otherwise timerfd, chosen at run time and
//! reported").
//!
//! SO_TXTIME only paces when the egress device's qdisc honours the departure time:
//! `fq` (EDT, CLOCK_MONOTONIC) or `etf` (CLOCK_TAI). Loopback's default qdisc is
//! `noqueue`, which sends at once whatever the timestamp says, so on loopback the loop's
//! own timer paces. The driver does not send SCM_TXTIME yet either (quinn-udp's transmit
//! has no departure time), so the report says what a device would allow, and the
//! choice is always the loop's wake-up (`--wake`).

use std::net::{IpAddr, SocketAddr, UdpSocket};

/// What the probe found.
#[derive(Debug)]
pub struct Probe {
    /// Whether a UDP socket of this family accepts SO_TXTIME (CLOCK_MONOTONIC).
    pub settable: Result<(), String>,
    /// The device packets to `peer` leave by, if found.
    pub device: Option<String>,
    /// Its qdiscs (root first), if read.
    pub qdiscs: Vec<String>,
}

impl Probe {
    /// Probes for traffic to `peer` (a throwaway socket: the driver's own is untouched).
    pub fn run(peer: SocketAddr) -> Probe {
        let device = egress_device(peer);
        let qdiscs = device.as_deref().map(qdiscs_of).unwrap_or_default();
        Probe {
            settable: probe_sockopt(peer.ip()),
            device,
            qdiscs,
        }
    }

    /// Whether the device's qdiscs honour departure times.
    pub fn device_paces(&self) -> bool {
        self.qdiscs.iter().any(|q| q == "fq" || q == "etf")
    }
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dev = self.device.as_deref().unwrap_or("unknown device");
        let qd = if self.qdiscs.is_empty() {
            "qdisc unknown".to_string()
        } else {
            format!("qdisc {}", self.qdiscs.join(", "))
        };
        match &self.settable {
            Err(e) => write!(f, "SO_TXTIME: refused ({e}); departures timed by the loop"),
            Ok(()) if self.device_paces() => write!(
                f,
                "SO_TXTIME: settable, and {dev} ({qd}) would honour departure times; not used: the driver's sends carry no SCM_TXTIME yet, departures timed by the loop"
            ),
            Ok(()) => write!(
                f,
                "SO_TXTIME: settable, but {dev} ({qd}) sends at once whatever the departure time (needs fq or etf): not used, departures timed by the loop"
            ),
        }
    }
}

/// Sets SO_TXTIME (CLOCK_MONOTONIC, as fq's EDT expects) on a fresh socket.
fn probe_sockopt(ip: IpAddr) -> Result<(), String> {
    let any: SocketAddr = match ip {
        IpAddr::V4(_) => "0.0.0.0:0".parse().expect("address"),
        IpAddr::V6(_) => "[::]:0".parse().expect("address"),
    };
    let s = UdpSocket::bind(any).map_err(|e| e.to_string())?;
    set_txtime(&s)
}

#[cfg(target_os = "linux")]
fn set_txtime(s: &UdpSocket) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let cfg = libc::sock_txtime {
        clockid: libc::CLOCK_MONOTONIC,
        flags: 0,
    };
    // SAFETY: a valid fd and a sock_txtime of the right length.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TXTIME,
            std::ptr::from_ref(&cfg).cast(),
            std::mem::size_of::<libc::sock_txtime>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

#[cfg(not(target_os = "linux"))]
fn set_txtime(_: &UdpSocket) -> Result<(), String> {
    Err("not Linux".into())
}

/// The device whose address the kernel would send from to `peer` (a connected UDP
/// socket picks the route; no packet leaves).
fn egress_device(peer: SocketAddr) -> Option<String> {
    let any: SocketAddr = match peer {
        SocketAddr::V4(_) => "0.0.0.0:0".parse().ok()?,
        SocketAddr::V6(_) => "[::]:0".parse().ok()?,
    };
    let s = UdpSocket::bind(any).ok()?;
    s.connect(peer).ok()?;
    let local = s.local_addr().ok()?.ip();
    crate::iface::name_of(local)
}

/// The kinds of the qdiscs on `device`, root first (an RTM_GETQDISC dump over
/// rtnetlink); empty when unreadable.
#[cfg(target_os = "linux")]
fn qdiscs_of(device: &str) -> Vec<String> {
    let Ok(name) = std::ffi::CString::new(device) else {
        return vec![];
    };
    // SAFETY: a NUL-terminated name.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        return vec![];
    }
    crate::netlink::qdisc_kinds(index as i32).unwrap_or_default()
}

#[cfg(not(target_os = "linux"))]
fn qdiscs_of(_: &str) -> Vec<String> {
    vec![]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_lo_and_noqueue_does_not_pace() {
        let p = Probe::run("127.0.0.1:4433".parse().unwrap());
        if cfg!(target_os = "linux") {
            assert_eq!(p.device.as_deref(), Some("lo"));
            assert!(p.settable.is_ok(), "{p}");
            // rtnetlink lists every device's root qdisc, noqueue included.
            assert!(!p.qdiscs.is_empty(), "{p:?}");
            // A test machine's loopback keeps its default qdisc.
            if p.qdiscs.iter().all(|q| q == "noqueue") {
                assert!(!p.device_paces());
                assert!(p.to_string().contains("sends at once"), "{p}");
            }
        }
    }
}
