//! `quiclab client --path-local ADDR`: multipath over real UDP
//! (draft-ietf-quic-multipath; the version is named in the proto's `wire/frame_mp.rs`).
//! The client binds one more socket per address; once a connection negotiated
//! multipath and its handshake is confirmed (§3: paths are opened after it), path 1 is
//! opened from the first address, path 2 from the second, and so on (§3.1: a
//! PATH_CHALLENGE with one of the peer's connection IDs for that path ID). With
//! `--abandon-path ID@BYTES`, path ID is abandoned (§3.4) once the connection has
//! received BYTES. At the end, what each path carried is printed.
//!
//! # Call contract
//! [`PathPlan::parse`] checks the flags; the caller binds each local address on the
//! driver (`EndpointDriver::add_socket`) and passes the bound addresses to
//! [`MultipathClient::new`] with the application it wraps. The wrapper only adds path
//! management after each [`Application::drive`]; the application decides when the run
//! is finished. [`MultipathClient::report`] gives the per-path lines.

use anyhow::{bail, Context, Result};
use quiclab_net::{AppError, Application};
use quiclab_proto::{ConnectionHandle, Endpoint, Instant, PathSendError};
use std::net::{IpAddr, SocketAddr};

/// `--abandon-path ID@BYTES`: abandon path `path_id` once the connection has
/// received `after_bytes` (UDP payload bytes, all paths together).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbandonRule {
    pub path_id: u32,
    pub after_bytes: u64,
}

impl AbandonRule {
    /// `ID@BYTES`, BYTES with an optional decimal suffix k, M or G (`1@50M`).
    pub fn parse(s: &str) -> Result<AbandonRule> {
        let (id, bytes) = s
            .split_once('@')
            .context("--abandon-path takes ID@BYTES, e.g. 1@50M")?;
        let path_id = id
            .parse()
            .with_context(|| format!("--abandon-path: path ID {id:?}"))?;
        let (digits, scale) = match bytes.char_indices().last() {
            Some((i, 'k')) => (&bytes[..i], 1_000),
            Some((i, 'M')) => (&bytes[..i], 1_000_000),
            Some((i, 'G')) => (&bytes[..i], 1_000_000_000),
            _ => (bytes, 1),
        };
        let n: u64 = digits
            .parse()
            .with_context(|| format!("--abandon-path: byte count {bytes:?}"))?;
        let after_bytes = n
            .checked_mul(scale)
            .context("--abandon-path: byte count too large")?;
        Ok(AbandonRule {
            path_id,
            after_bytes,
        })
    }
}

/// The client's multipath flags, checked.
#[derive(Clone, Debug, Default)]
pub struct PathPlan {
    /// Local addresses to open paths 1, 2, ... from (port 0: the kernel's choice).
    pub locals: Vec<SocketAddr>,
    pub abandon: Option<AbandonRule>,
}

impl PathPlan {
    /// `--path-local` values (an IP, or IP:port) and `--abandon-path`. `multipath`:
    /// the config offers multipath (`--multipath` or the transport key).
    pub fn parse(locals: &[String], abandon: Option<&str>, multipath: bool) -> Result<PathPlan> {
        if (!locals.is_empty() || abandon.is_some()) && !multipath {
            bail!("--path-local and --abandon-path need --multipath (or multipath.enabled)");
        }
        let locals = locals
            .iter()
            .map(|s| parse_local(s))
            .collect::<Result<Vec<_>>>()?;
        let abandon = abandon.map(AbandonRule::parse).transpose()?;
        Ok(PathPlan { locals, abandon })
    }

    pub fn is_empty(&self) -> bool {
        self.locals.is_empty() && self.abandon.is_none()
    }
}

fn parse_local(s: &str) -> Result<SocketAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    s.parse()
        .with_context(|| format!("--path-local {s:?}: not an IP address or IP:port"))
}

/// What one connection's paths carried, as last seen.
#[derive(Clone, Debug, Default)]
struct PathTally {
    /// Per path ID: UDP payload bytes and packets received, whether validated and
    /// abandoned (path 0: what the others did not carry).
    paths: Vec<(u64, u64, bool, bool)>,
    /// Paths opened so far (1-based count of `locals` used).
    opened: usize,
    /// The abandon rule was applied.
    abandoned: bool,
}

/// An application with multipath path management added (see the module's contract).
pub struct MultipathClient<'a> {
    inner: &'a mut dyn Application,
    /// Bound local addresses of paths 1, 2, ...
    locals: Vec<SocketAddr>,
    abandon: Option<AbandonRule>,
    conns: Vec<(ConnectionHandle, PathTally)>,
}

impl<'a> MultipathClient<'a> {
    pub fn new(
        inner: &'a mut dyn Application,
        locals: Vec<SocketAddr>,
        abandon: Option<AbandonRule>,
    ) -> Self {
        MultipathClient {
            inner,
            locals,
            abandon,
            conns: Vec::new(),
        }
    }

    /// One line per connection and path: `multipath: connection N path P (from
    /// ADDR): B bytes in K packets received[, validated][, abandoned]`.
    pub fn report(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (n, (_, t)) in self.conns.iter().enumerate() {
            for (id, &(bytes, packets, validated, abandoned)) in t.paths.iter().enumerate() {
                let from = match id.checked_sub(1).and_then(|i| self.locals.get(i)) {
                    Some(a) => format!(" (from {a})"),
                    None => String::new(),
                };
                let mut line = format!(
                    "multipath: connection {n} path {id}{from}: {bytes} bytes in {packets} packets received"
                );
                if validated {
                    line.push_str(", validated");
                }
                if abandoned {
                    line.push_str(", abandoned");
                }
                out.push(line);
            }
        }
        out
    }

    /// Opens the paths not yet opened, applies the abandon rule, and notes the tallies
    /// of every connection still in the endpoint.
    fn manage(&mut self, endpoint: &mut Endpoint) {
        let handles: Vec<ConnectionHandle> = endpoint.handles().collect();
        for h in handles {
            let Some(conn) = endpoint.connection_mut(h) else {
                continue;
            };
            let i = match self.conns.iter().position(|(c, _)| *c == h) {
                Some(i) => i,
                None => {
                    self.conns.push((h, PathTally::default()));
                    self.conns.len() - 1
                }
            };
            let t = &mut self.conns[i].1;
            if conn.multipath_negotiated() && conn.is_handshake_confirmed() {
                open_paths(conn, &self.locals, t);
                if let Some(rule) = self.abandon.filter(|_| !t.abandoned) {
                    if conn.stats().datagrams_received.bytes >= rule.after_bytes {
                        t.abandoned = true;
                        match conn.multipath_abandon_path(rule.path_id, 0) {
                            Ok(()) => eprintln!(
                                "multipath: path {} abandoned after {} bytes received",
                                rule.path_id, rule.after_bytes
                            ),
                            Err(e) => eprintln!("multipath: abandoning path {}: {e}", rule.path_id),
                        }
                    }
                }
            }
            tally(conn, self.locals.len(), t);
        }
    }
}

/// Opens paths `t.opened + 1 ..` from `locals` (the next one waits while the peer
/// has given no connection ID for it yet, §3.5).
fn open_paths(conn: &mut quiclab_proto::Connection, locals: &[SocketAddr], t: &mut PathTally) {
    while let Some(&local) = locals.get(t.opened) {
        let id = u32::try_from(t.opened + 1).unwrap_or(u32::MAX);
        match conn.multipath_open_path(id, local) {
            Ok(()) => eprintln!("multipath: opening path {id} from {local}"),
            Err(PathSendError::NoConnectionId) => return,
            Err(e) => eprintln!("multipath: path {id} from {local} not opened: {e}"),
        }
        t.opened += 1;
    }
}

/// The per-path figures of `conn` (paths 0 to `paths`).
fn tally(conn: &quiclab_proto::Connection, paths: usize, t: &mut PathTally) {
    let stats = conn.stats();
    let (mut bytes0, mut packets0) = (
        stats.datagrams_received.bytes,
        stats.datagrams_received.packets,
    );
    let mut rows = vec![(0, 0, true, false)];
    for id in 1..=u32::try_from(paths).unwrap_or(u32::MAX) {
        let bytes = conn.multipath_bytes_received(id);
        let packets = conn.multipath_packets(id).map_or(0, |(r, _)| r);
        bytes0 = bytes0.saturating_sub(bytes);
        packets0 = packets0.saturating_sub(packets);
        let validated = conn.multipath_path_validated(id);
        rows.push((bytes, packets, validated, conn.multipath_path_abandoned(id)));
    }
    rows[0].0 = bytes0;
    rows[0].1 = packets0;
    rows[0].3 = conn.multipath_path_abandoned(0);
    t.paths = rows;
}

impl Application for MultipathClient<'_> {
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError> {
        self.inner.drive(endpoint, now)?;
        self.manage(endpoint);
        Ok(())
    }

    fn finished(&self, endpoint: &Endpoint) -> bool {
        self.inner.finished(endpoint)
    }

    fn shutdown(&mut self, endpoint: &mut Endpoint, now: Instant) {
        self.inner.shutdown(endpoint, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandon_rules_parse_with_suffixes_and_bad_ones_are_errors() {
        let r = |s| AbandonRule::parse(s).map(|r| (r.path_id, r.after_bytes));
        assert_eq!(r("1@50M").unwrap(), (1, 50_000_000));
        assert_eq!(r("0@7").unwrap(), (0, 7));
        assert_eq!(r("2@3k").unwrap(), (2, 3_000));
        assert_eq!(r("1@1G").unwrap(), (1, 1_000_000_000));
        for bad in ["1", "x@5", "1@", "1@5T", "1@-5", "1@99999999999G"] {
            assert!(r(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn path_flags_need_multipath_and_addresses_parse() {
        let locals = ["127.0.0.2".to_string(), "127.0.0.3:5000".to_string()];
        assert!(PathPlan::parse(&locals, None, false).is_err());
        let p = PathPlan::parse(&locals, Some("1@1k"), true).unwrap();
        assert_eq!(p.locals[0], "127.0.0.2:0".parse().unwrap());
        assert_eq!(p.locals[1], "127.0.0.3:5000".parse().unwrap());
        assert!(PathPlan::parse(&["nope".into()], None, true).is_err());
        assert!(PathPlan::parse(&[], None, false).unwrap().is_empty());
    }
}
