//! `session_from`: a flow's client resumes the TLS session of an earlier flow of the
//! same client (RFC 9001 §4.5; RFC 8446 §2.2), so an experiment can mix first and
//! repeat connections. With `zero_rtt = true` in the flow's client transport table the
//! repeat connection sends its requests in 0-RTT (RFC 9001 §4.6), which its server
//! accepts when its own `zero_rtt` is true and the earlier flow's server issued its
//! ticket with `zero_rtt = true` too (a ticket carries whether early data is allowed).
//!
//! `session_from = "first"` names the earlier flow. It must be another QUIC flow on the
//! same dumbbell pair that starts earlier and does not itself resume (one level:
//! repeat connections of one first connection). Whether the earlier flow has received
//! its tickets when this one starts is only known while running: if not, this flow
//! makes a full handshake, as a client without a ticket does (deterministically).
//!
//! On a TCP flow the same key resumes a TLS 1.3 session over TCP (`tls_resume.rs`
//! checks it; early data is `[flows.tls] early_data`); this module leaves those alone.

use super::validate::Check;
use super::{Scenario, ScenarioError, Transport};

/// A flow's validated reference to the flow whose session it resumes.
pub type SessionFrom = usize;

impl Scenario {
    /// The flow whose TLS session flow `i` resumes, if any (validated as the module
    /// docs say; `file` names the scenario in errors).
    pub fn session_from(&self, i: usize, file: &str) -> Result<Option<SessionFrom>, ScenarioError> {
        let c = Check { file };
        let f = &self.flows[i];
        let Some(name) = &f.session_from else {
            return Ok(None);
        };
        if f.transport == Transport::Tcp {
            return Ok(None);
        }
        let key = format!("flows[{i}] ({}).session_from", f.name);
        let Some(j) = self.flows.iter().position(|g| &g.name == name) else {
            return c.bad(key, format!("no flow named {name:?}"));
        };
        let src = &self.flows[j];
        if i == j {
            return c.bad(key, "a flow cannot resume its own session");
        }
        if f.transport != Transport::Quic || src.transport != Transport::Quic {
            return c.bad(key, "a QUIC flow resumes the session of another QUIC flow");
        }
        if src.pair != f.pair {
            return c.bad(
                key,
                format!(
                    "flow {name:?} is on pair {}, not on this flow's pair {}",
                    src.pair, f.pair
                ),
            );
        }
        if src.start_s >= f.start_s {
            return c.bad(key, format!("flow {name:?} must start before this flow"));
        }
        if src.session_from.is_some() {
            return c.bad(
                key,
                format!("flow {name:?} resumes a session itself; name the first connection"),
            );
        }
        Ok(Some(j))
    }
}
