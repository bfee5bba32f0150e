//! TLS session resumption between flows (`session_from`, see `scenario::session_from`):
//! the flows of one first connection and its repeats share a client ticket cache
//! ([`SessionCache`]) and one server-side session store, so a repeat flow's client
//! resumes the ticket its first flow's server issued, and sends 0-RTT when its client
//! transport config has `zero_rtt` (RFC 9001 §4.6). Flows without `session_from` that
//! no flow resumes keep the plain configs (no tickets), so their bytes are unchanged.
//!
//! The first flow's server issues one ticket per flow resuming from it (at most 4, the
//! cache's bound per server); tickets are single use (RFC 8446 §C.4).

use crate::scenario::{Scenario, ScenarioError};
use quiclab_proto::tls::{
    resuming_client_config, server_session_storage, ticketing_server_config, SessionCache,
    VirtualClock,
};
use rustls::server::StoresServerSessions;
use std::sync::Arc;

/// Sessions kept by the server side of all flows (first connections' sessions).
const SERVER_SESSIONS: usize = 1024;
/// Tickets a first flow's server issues at most.
const MAX_TICKETS: usize = 4;

/// Per flow: its ticket cache and how many tickets its server issues.
#[derive(Default)]
pub(super) struct Sessions {
    caches: Vec<Option<Arc<SessionCache>>>,
    tickets: Vec<usize>,
    storage: Option<Arc<dyn StoresServerSessions>>,
}

impl Sessions {
    /// Reads (and validates) every flow's `session_from`.
    pub(super) fn new(scenario: &Scenario, file: &str) -> Result<Self, ScenarioError> {
        let n = scenario.flows.len();
        let mut s = Sessions {
            caches: vec![None; n],
            tickets: vec![0; n],
            storage: None,
        };
        for i in 0..n {
            if let Some(j) = scenario.session_from(i, file)? {
                let cache = s.caches[j].get_or_insert_with(SessionCache::new).clone();
                s.caches[i] = Some(cache);
                s.tickets[j] = (s.tickets[j] + 1).min(MAX_TICKETS);
            }
        }
        if s.caches.iter().any(Option::is_some) {
            s.storage = Some(server_session_storage(SERVER_SESSIONS));
        }
        Ok(s)
    }

    /// Flow `i`'s client TLS config: `base`, or a copy resuming through the flow's
    /// cache, offering 0-RTT when `zero_rtt`.
    pub(super) fn client_tls(
        &self,
        i: usize,
        base: &Arc<rustls::ClientConfig>,
        zero_rtt: bool,
    ) -> Arc<rustls::ClientConfig> {
        match &self.caches[i] {
            Some(cache) => {
                resuming_client_config(base, cache.clone(), zero_rtt, VirtualClock::default())
            }
            None => base.clone(),
        }
    }

    /// Flow `i`'s server TLS config: `base`, or a copy sharing the session store,
    /// issuing the tickets later flows resume and accepting 0-RTT when `zero_rtt`.
    pub(super) fn server_tls(
        &self,
        i: usize,
        base: Arc<rustls::ServerConfig>,
        zero_rtt: bool,
    ) -> Arc<rustls::ServerConfig> {
        match (&self.caches[i], &self.storage) {
            (Some(_), Some(storage)) => ticketing_server_config(
                &base,
                storage.clone(),
                self.tickets[i],
                zero_rtt,
                VirtualClock::default(),
            ),
            _ => base,
        }
    }
}
