//! `session_from` on a TCP flow, and `[flows.tls] early_data`: a TCP flow's TLS 1.3 client
//! resumes the session of an earlier flow of the same client (its ticket, RFC 8446
//! §2.2) and may send its first request as early data (RFC 8446 §2.3, §4.2.10). Over TCP
//! Fast Open (`[flows.tcp] fast_open = true`) that request rides in the SYN. The flow
//! key `session_from` is the same one QUIC flows use (`session_from.rs`).
//!
//! ```toml
//! [[flows]]
//! name = "second"
//! start_s = 2.0
//! transport = "tcp"
//! workload = { kind = "request", size = 1000 }
//! session_from = "first"
//! tcp = { fast_open = true }
//! tls = { version = "1.3", early_data = true }
//! ```
//!
//! The referenced flow must exist, come earlier in the file, be a TCP flow with TLS
//! 1.3 on the same pair, and so must this one; `early_data` needs `session_from`.
//! Whether a ticket has arrived when this flow starts is only known while running:
//! without one the handshake is a full one (and early data is not sent).

use super::validate::Check;
use super::TlsVersion;
use super::{Flow, Scenario, ScenarioError, Transport};

impl Scenario {
    /// Checks TCP flow `i`'s `session_from` / `tls.early_data`.
    pub(super) fn check_tls_resume(
        &self,
        file: &str,
        i: usize,
        f: &Flow,
    ) -> Result<(), ScenarioError> {
        let c = Check { file };
        let early = f.tls.as_ref().is_some_and(|t| t.early_data);
        let Some(name) = &f.session_from else {
            if early {
                let key = format!("flows[{i}] ({}).tls.early_data", f.name);
                return c.bad(key, "needs session_from (a ticket)");
            }
            return Ok(());
        };
        let key = format!("flows[{i}] ({}).session_from", f.name);
        if f.tls.as_ref().and_then(|t| t.version) != Some(TlsVersion::Tls13) {
            return c.bad(
                key,
                "session tickets here are TLS 1.3's: needs tls = { version = \"1.3\" }",
            );
        }
        let Some(j) = self.flows.iter().position(|g| &g.name == name) else {
            return c.bad(key, format!("no flow named {name:?}"));
        };
        let g = &self.flows[j];
        if j >= i {
            return c.bad(key, format!("{name:?} must come earlier in the file"));
        }
        let tls13 = g
            .tls
            .as_ref()
            .is_some_and(|t| t.version == Some(TlsVersion::Tls13));
        if g.transport != Transport::Tcp || !tls13 {
            return c.bad(key, format!("{name:?} is not a TCP flow with TLS 1.3"));
        }
        if g.pair != f.pair {
            return c.bad(
                key,
                format!("{name:?} runs on another pair (another client)"),
            );
        }
        Ok(())
    }

    /// The first flow of TCP flow `i`'s `session_from` chain when `i` resumes or is
    /// resumed (those flows share a session store), else `None`. Valid scenarios only
    /// reference earlier flows, so the walk ends.
    pub fn tls_chain_root(&self, i: usize) -> Option<usize> {
        let root = self.resume_root(i);
        let resumed = (0..self.flows.len()).any(|j| j != i && self.resume_root(j) == i);
        (root != i || resumed).then_some(root)
    }

    /// Whether some flow of the chain starting at `root` sends early data.
    pub fn tls_chain_early_data(&self, root: usize) -> bool {
        (0..self.flows.len()).any(|j| {
            self.resume_root(j) == root && self.flows[j].tls.as_ref().is_some_and(|t| t.early_data)
        })
    }

    fn resume_root(&self, mut i: usize) -> usize {
        for _ in 0..self.flows.len() {
            let f = &self.flows[i];
            let next = (f.transport == Transport::Tcp)
                .then_some(f.session_from.as_ref())
                .flatten()
                .and_then(|n| self.flows.iter().position(|g| &g.name == n));
            match next {
                Some(j) if j < i => i = j,
                _ => break,
            }
        }
        i
    }
}
