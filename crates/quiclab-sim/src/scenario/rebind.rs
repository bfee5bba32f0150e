//! Scripted NAT rebindings of a flow's client (`[[flows.rebinds]]`): at `at_s` a NAT in
//! front of the client gives its datagrams a new source port or a new source address,
//! as the interop runner's rebind scenarios do and as a NAT timeout does. The client
//! never learns of it (its own address does not change); the server sees its peer move
//! (RFC 9000 §9.3). Datagrams to the old public address reach the client until the
//! mapping expires, at once with `expire_old`. `rebind_every` scripts them
//! periodically (a NAT that times mappings out every so often):
//! `rebind_every = { period_s = 5.0, kind = "port", expire_old = true }` rebinds at
//! `first_s` (default `period_s`) and every `period_s` after it until the stop time.

use super::validate::Check;
use super::{Flow, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, SocketAddrV4};

/// Rebindings in a scenario at most: each takes its own port (port rebinds, from
/// [`REBIND_PORTS`]) or its own address (address rebinds, 10.3.x.y).
pub const MAX_REBINDS: usize = 10_000;
/// The public ports port rebindings take, one each, in scenario order (below the
/// pooled web flows' [`super::EXTRA_PORTS`] and the flows' 40000+).
pub const REBIND_PORTS: std::ops::Range<u16> = 20_000..30_000;

/// One NAT rebinding of a flow's client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rebind {
    /// When, seconds from the start of the run.
    pub at_s: f64,
    /// `"port"`: a new source port on the same address; `"addr"`: a new source address
    /// (and the same port).
    pub kind: RebindKind,
    /// The old mapping stops at once: the server's datagrams to the old public
    /// address are lost from then on (default false: they still reach the client).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expire_old: bool,
}

/// Periodic NAT rebindings of a flow's client (`flows[i].rebind_every`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebindEvery {
    /// Seconds between rebindings (> 0).
    pub period_s: f64,
    /// The first one, seconds from the start of the run (default `period_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_s: Option<f64>,
    pub kind: RebindKind,
    /// As [`Rebind::expire_old`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expire_old: bool,
}

impl RebindEvery {
    /// The rebindings up to `stop_s` seconds, at most `limit + 1` of them (so a caller
    /// can tell that there would be more than `limit`).
    fn expand(&self, stop_s: f64, limit: usize) -> Vec<Rebind> {
        let first = self.first_s.unwrap_or(self.period_s);
        let mut out = Vec::new();
        let mut n = 0u32;
        loop {
            let at_s = first + f64::from(n) * self.period_s;
            if at_s > stop_s || out.len() > limit || self.period_s.is_nan() || self.period_s <= 0.0
            {
                return out;
            }
            out.push(Rebind {
                at_s,
                kind: self.kind,
                expire_old: self.expire_old,
            });
            n = n.saturating_add(1);
        }
    }
}

/// What a rebinding changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RebindKind {
    Port,
    Addr,
}

/// The public address after rebinding number `n` (0-based, in scenario order over all
/// flows) of `kind` from `current`: unique in the run, and never a host's or a flow's.
pub fn rebound(current: SocketAddrV4, kind: RebindKind, n: usize) -> SocketAddrV4 {
    match kind {
        RebindKind::Port => {
            let port = REBIND_PORTS.start.saturating_add(n as u16);
            SocketAddrV4::new(*current.ip(), port)
        }
        RebindKind::Addr => {
            let ip = Ipv4Addr::new(10, 3, (n / 250) as u8, (n % 250 + 1) as u8);
            SocketAddrV4::new(ip, current.port())
        }
    }
}

impl super::Flow {
    /// Whether the flow scripts NAT rebindings (`rebinds` or `rebind_every`).
    pub fn has_rebinds(&self) -> bool {
        !self.rebinds.is_empty() || self.rebind_every.is_some()
    }
}

impl Scenario {
    /// Flow `i`'s NAT rebindings: `rebinds` in their order, then `rebind_every`'s up
    /// to the stop time (at most [`MAX_REBINDS`] + 1 of those, which validation
    /// refuses). Their order numbers them (the public address each takes).
    pub fn flow_rebinds(&self, i: usize) -> Vec<Rebind> {
        let f = &self.flows[i];
        let mut all = f.rebinds.clone();
        if let Some(e) = &f.rebind_every {
            all.extend(e.expand(self.stop.time_s, MAX_REBINDS));
        }
        all
    }

    /// A flow's rebindings: QUIC flows only (a TCP connection does not survive one),
    /// at valid times; the scenario's total (`before` in earlier flows) within
    /// [`MAX_REBINDS`].
    pub(super) fn check_rebinds(
        &self,
        c: Check,
        i: usize,
        f: &Flow,
        before: usize,
    ) -> Result<(), ScenarioError> {
        if !f.has_rebinds() {
            return Ok(());
        }
        if !f.transport.is_quic() {
            return c.bad(
                format!("flows[{i}].rebinds"),
                "only QUIC flows follow a NAT rebinding (RFC 9000 §9.3); TCP ends its connection",
            );
        }
        for (k, r) in f.rebinds.iter().enumerate() {
            c.seconds(format!("flows[{i}].rebinds[{k}].at_s"), r.at_s, false)?;
        }
        if let Some(e) = &f.rebind_every {
            c.seconds(
                format!("flows[{i}].rebind_every.period_s"),
                e.period_s,
                true,
            )?;
            if let Some(first) = e.first_s {
                c.seconds(format!("flows[{i}].rebind_every.first_s"), first, false)?;
            }
        }
        if before.saturating_add(self.flow_rebinds(i).len()) > MAX_REBINDS {
            return c.bad(
                format!("flows[{i}].rebinds"),
                format!("at most {MAX_REBINDS} rebindings in a scenario"),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebound_addresses_are_unique_and_keep_what_does_not_change() {
        let a = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40000);
        assert_eq!(
            rebound(a, RebindKind::Port, 0),
            "10.0.0.1:20000".parse().unwrap()
        );
        assert_eq!(
            rebound(a, RebindKind::Addr, 0),
            "10.3.0.1:40000".parse().unwrap()
        );
        let mut seen = std::collections::HashSet::new();
        for n in 0..MAX_REBINDS {
            assert!(seen.insert(rebound(a, RebindKind::Addr, n)));
            assert!(REBIND_PORTS.contains(&rebound(a, RebindKind::Port, n).port()));
        }
    }
}
