//! NAT rebinding, as the QUIC interop runner's `rebind` scenarios do it: at
//! `first`, then every `every`, the relay moves the socket it uses toward the server
//! to a new source port (`Port`), or to a new source address within 127.0.0.0/8
//! (`Addr`: 127.0.0.2, 127.0.0.3, ...; Linux's loopback answers for all of 127/8).
//! The client side is untouched, so the server sees its peer's address change in the
//! middle of a connection (RFC 9000 §9: it must validate the new path, §9.3).
//! Datagrams still on their way to the old socket are lost with it, as behind a NAT
//! whose mapping changed.

use crate::error::{NetError, Result};
use quiclab_proto::Instant;
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// At most this many rebinds are listed in emulate.json (all are counted).
const MAX_RECORDS: usize = 1000;

/// What a rebind changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RebindKind {
    /// A new ephemeral source port, the same address.
    Port,
    /// A new source address in 127.0.0.0/8 (and a new port).
    Addr,
}

/// When and how the relay rebinds toward the server (`quiclab emulate --rebind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rebind {
    pub kind: RebindKind,
    /// Emulator time of the first rebind.
    pub first: Duration,
    /// Time between later rebinds; `None`: only the first.
    pub every: Option<Duration>,
}

impl Rebind {
    /// Errors: address rebinding toward a server outside 127.0.0.0/8 (the new
    /// addresses are loopback ones), or a zero interval.
    pub fn check(&self, upstream: SocketAddr) -> Result<()> {
        if self.kind == RebindKind::Addr && !is_v4_loopback(upstream.ip()) {
            return Err(NetError::Config(format!(
                "--rebind addr takes its new source addresses from 127.0.0.0/8: \
                 --upstream {upstream} is not in it"
            )));
        }
        if self.every.is_some_and(|d| d.is_zero()) {
            return Err(NetError::Config("--rebind-freq must be > 0".into()));
        }
        Ok(())
    }

    /// Where the relay's first socket toward the server binds: for `Addr`,
    /// 127.0.0.1 (the address the later ones move away from).
    pub fn initial_bind(kind: Option<RebindKind>, unspecified: SocketAddr) -> SocketAddr {
        match kind {
            Some(RebindKind::Addr) => (Ipv4Addr::LOCALHOST, 0).into(),
            _ => unspecified,
        }
    }
}

fn is_v4_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// One rebind, for emulate.json.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RebindRecord {
    /// Emulator time, seconds.
    pub at_s: f64,
    /// The relay's address toward the server before and after.
    pub from: SocketAddr,
    pub to: SocketAddr,
}

/// The rebind schedule as it runs, and what it did.
#[derive(Debug)]
pub(super) struct Rebinder {
    rebind: Rebind,
    next: Option<Instant>,
    /// Rebinds done (the `Addr` sequence's position).
    pub done: u64,
    /// Rebinds that failed to bind (the old socket stays).
    pub failed: u64,
    pub records: Vec<RebindRecord>,
}

impl Rebinder {
    pub fn new(rebind: Rebind) -> Self {
        Rebinder {
            rebind,
            next: Some(Instant::ZERO + rebind.first),
            done: 0,
            failed: 0,
            records: Vec::new(),
        }
    }

    /// When the next rebind is due (emulator time).
    pub fn due(&self) -> Option<Instant> {
        self.next
    }

    /// The address the next socket binds: the current one's address with a new
    /// ephemeral port, or the next address of 127.0.0.2..=127.0.0.254 in turn.
    pub fn next_bind(&self, current: SocketAddr) -> SocketAddr {
        match self.rebind.kind {
            RebindKind::Port => SocketAddr::new(current.ip(), 0),
            RebindKind::Addr => {
                let n = 2 + (self.done % 253) as u8;
                (Ipv4Addr::new(127, 0, 0, n), 0).into()
            }
        }
    }

    /// Records the outcome of the rebind due at `now` and schedules the next one.
    pub fn finish(&mut self, now: Instant, moved: Option<(SocketAddr, SocketAddr)>) {
        match moved {
            Some((from, to)) => {
                self.done = self.done.saturating_add(1);
                if self.records.len() < MAX_RECORDS {
                    let at_s = now.as_secs_f64();
                    self.records.push(RebindRecord { at_s, from, to });
                }
            }
            None => self.failed = self.failed.saturating_add(1),
        }
        // From the schedule, not from `now`: a late turn does not shift later rebinds.
        self.next = match (self.next, self.rebind.every.filter(|e| !e.is_zero())) {
            (Some(due), Some(every)) => {
                let mut next = due + every;
                while next <= now {
                    next += every;
                }
                Some(next)
            }
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn schedule_and_addresses() {
        let rebind = Rebind {
            kind: RebindKind::Addr,
            first: Duration::from_secs(1),
            every: Some(Duration::from_millis(500)),
        };
        let mut r = Rebinder::new(rebind);
        assert_eq!(r.due(), Some(Instant::from_millis(1000)));
        assert_eq!(r.next_bind(addr("127.0.0.1:5000")), addr("127.0.0.2:0"));
        r.finish(
            Instant::from_millis(1001),
            Some((addr("127.0.0.1:5000"), addr("127.0.0.2:6000"))),
        );
        assert_eq!(r.due(), Some(Instant::from_millis(1500)));
        assert_eq!(r.next_bind(addr("127.0.0.2:6000")), addr("127.0.0.3:0"));
        // A turn 1.2 s late skips the rebinds it missed instead of bunching them.
        r.finish(Instant::from_millis(2700), None);
        assert_eq!(r.due(), Some(Instant::from_millis(3000)));
        assert_eq!((r.done, r.failed, r.records.len()), (1, 1, 1));
        let once = Rebind {
            kind: RebindKind::Port,
            every: None,
            ..rebind
        };
        let mut r = Rebinder::new(once);
        assert_eq!(r.next_bind(addr("0.0.0.0:5000")), addr("0.0.0.0:0"));
        r.finish(Instant::from_millis(1000), None);
        assert_eq!(r.due(), None);
    }

    #[test]
    fn address_rebinding_needs_a_loopback_upstream() {
        let rebind = Rebind {
            kind: RebindKind::Addr,
            first: Duration::ZERO,
            every: None,
        };
        assert!(rebind.check(addr("127.0.0.1:4433")).is_ok());
        assert!(rebind.check(addr("10.0.0.1:4433")).is_err());
        assert!(rebind.check(addr("[::1]:4433")).is_err());
        let port = Rebind {
            kind: RebindKind::Port,
            ..rebind
        };
        assert!(port.check(addr("[::1]:4433")).is_ok());
        let zero = Rebind {
            every: Some(Duration::ZERO),
            ..port
        };
        assert!(zero.check(addr("127.0.0.1:4433")).is_err());
    }
}
