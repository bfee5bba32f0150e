//! Session resumption (RFC 9001 §4.5, RFC 8446 §2.2): the client's ticket cache and the
//! TLS configs that issue, keep and use tickets and 0-RTT (RFC 9001 §4.6.1).
//!
//! The cache is in memory only: rustls 0.23 keeps a ticket's resumption secret private
//! (`Tls13ClientSessionValue` has no public constructor or encoding), so a ticket cannot
//! be written to a file and read back by a later process. A driver that wants several
//! connections to resume keeps one [`SessionCache`] for them (the simulator per client,
//! the CLI per process). The transport parameters to remember with a ticket (RFC 9000
//! §7.4.1) travel inside rustls's ticket value and come back through
//! `TlsSession::remembered_params`.
//!
//! Determinism: tickets are kept per server name in a `BTreeMap`, newest last, and a
//! connection takes the newest (as rustls's own cache does); nothing reads a clock (the
//! configs get a [`VirtualClock`]).

use super::clock::VirtualClock;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

/// Tickets kept per server name (rustls servers send two per connection by default).
const TICKETS_PER_SERVER: usize = 4;
/// Server names kept; the first name inserted goes first when full.
const MAX_SERVERS: usize = 256;
/// RFC 9001 §4.6.1: the max_early_data_size that says "QUIC 0-RTT accepted".
pub const QUIC_EARLY_DATA_SENTINEL: u32 = u32::MAX;

#[derive(Default)]
struct Entry {
    kx_hint: Option<NamedGroup>,
    tickets: VecDeque<Tls13ClientSessionValue>,
}

/// A bounded in-memory client ticket store (rustls `ClientSessionStore`), shareable
/// between the connections that should resume one another (share the `Arc`).
#[derive(Default)]
pub struct SessionCache {
    entries: Mutex<(BTreeMap<String, Entry>, VecDeque<String>)>,
}

impl std::fmt::Debug for SessionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCache")
            .field("tickets", &self.tickets())
            .finish()
    }
}

fn key(name: &ServerName<'_>) -> String {
    name.to_str().into_owned()
}

impl SessionCache {
    pub fn new() -> Arc<Self> {
        Arc::new(SessionCache::default())
    }

    fn lock(&self) -> MutexGuard<'_, (BTreeMap<String, Entry>, VecDeque<String>)> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tickets held, over all servers.
    pub fn tickets(&self) -> usize {
        self.lock().0.values().map(|e| e.tickets.len()).sum()
    }

    fn with_entry(&self, name: &ServerName<'_>, f: impl FnOnce(&mut Entry)) {
        let mut guard = self.lock();
        let (map, order) = &mut *guard;
        let k = key(name);
        if !map.contains_key(&k) {
            if order.len() >= MAX_SERVERS {
                if let Some(old) = order.pop_front() {
                    map.remove(&old);
                }
            }
            order.push_back(k.clone());
        }
        f(map.entry(k).or_default());
    }
}

impl ClientSessionStore for SessionCache {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.with_entry(&server_name, |e| e.kx_hint = Some(group));
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.lock().0.get(&key(server_name)).and_then(|e| e.kx_hint)
    }

    // QUIC is TLS 1.3 only (RFC 9001 §4.2): nothing of TLS 1.2 is kept.
    fn set_tls12_session(&self, _: ServerName<'static>, _: Tls12ClientSessionValue) {}

    fn tls12_session(&self, _: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        None
    }

    fn remove_tls12_session(&self, _: &ServerName<'static>) {}

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        self.with_entry(&server_name, |e| {
            if e.tickets.len() >= TICKETS_PER_SERVER {
                e.tickets.pop_front();
            }
            e.tickets.push_back(value);
        });
    }

    /// Tickets are single use (RFC 8446 §C.4): the newest is taken out.
    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        self.lock()
            .0
            .get_mut(&key(server_name))
            .and_then(|e| e.tickets.pop_back())
    }
}

/// A copy of `base` that resumes through `cache` and, with `zero_rtt`, offers 0-RTT
/// when a ticket allows it (RFC 9001 §4.6.1), reading time from `clock` (the
/// connections' `now`; see `clock.rs`). Connections resume one another only when
/// their configs come from the same `base` (rustls ties a ticket to the certificate
/// verifier that checked the original handshake).
pub fn resuming_client_config(
    base: &Arc<rustls::ClientConfig>,
    cache: Arc<SessionCache>,
    zero_rtt: bool,
    clock: VirtualClock,
) -> Arc<rustls::ClientConfig> {
    let mut config = (**base).clone();
    config.resumption = rustls::client::Resumption::store(cache);
    config.enable_early_data = zero_rtt;
    config.time_provider = Arc::new(clock);
    Arc::new(config)
}

/// A copy of `base` that issues `tickets` session tickets per connection (RFC 8446
/// §4.6.1; stateful, kept in `storage`, which servers that should resume one another's
/// sessions share) and, with `zero_rtt`, accepts 0-RTT (RFC 9001 §4.6.1: the ticket's
/// max_early_data_size is the sentinel 0xffffffff), reading time from `clock`.
pub fn ticketing_server_config(
    base: &Arc<rustls::ServerConfig>,
    storage: Arc<dyn rustls::server::StoresServerSessions>,
    tickets: usize,
    zero_rtt: bool,
    clock: VirtualClock,
) -> Arc<rustls::ServerConfig> {
    let mut config = (**base).clone();
    config.session_storage = storage;
    config.send_tls13_tickets = tickets;
    config.max_early_data_size = if zero_rtt {
        QUIC_EARLY_DATA_SENTINEL
    } else {
        0
    };
    config.time_provider = Arc::new(clock);
    Arc::new(config)
}

/// A server-side session store for [`ticketing_server_config`] (rustls's bounded
/// in-memory store, FIFO eviction).
pub fn server_session_storage(size: usize) -> Arc<dyn rustls::server::StoresServerSessions> {
    rustls::server::ServerSessionMemoryCache::new(size)
}
