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
//! RFC 9369 §5: tickets are specific to the QUIC version of the connection that got
//! them. Both sides learn the version from [`with_quic_version`], which the connection's
//! TLS session installs around its rustls calls (as it does the time and the random
//! source): the client's [`SessionCache`] keeps tickets per (version, server name),
//! inserting under the connection's current version (the negotiated one after a
//! compatible upgrade) and taking under the version the connection starts in; the
//! server's storage ([`ticketing_server_config`]) keeps sessions of each version apart,
//! so a ticket from another version is not found and the handshake is a full one,
//! without 0-RTT. Version 1 keys are the unscoped ones, so a v1-only run is unchanged.
//!
//! Determinism: tickets are kept per server name in a `BTreeMap`, newest last, and a
//! connection takes the newest of its version (as rustls's own cache does); nothing
//! reads a clock (the configs get a [`VirtualClock`]).

use super::clock::VirtualClock;
use crate::wire::VERSION_1;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;
use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

thread_local! {
    /// The QUIC version of the connection whose rustls call is running on this thread.
    static QUIC_VERSION: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Runs `f` with `version` as the QUIC version that the ticket stores of this module
/// see for every rustls call it makes on this thread; restores the previous one
/// afterwards (nesting is allowed).
pub fn with_quic_version<R>(version: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<u32>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = QUIC_VERSION.try_with(|slot| slot.set(self.0));
        }
    }
    let _restore = Restore(QUIC_VERSION.with(|slot| slot.replace(Some(version))));
    f()
}

/// The version installed by [`with_quic_version`]; version 1 outside one.
fn current_version() -> u32 {
    QUIC_VERSION
        .try_with(Cell::get)
        .ok()
        .flatten()
        .unwrap_or(VERSION_1)
}

/// Tickets kept per server name and QUIC version (rustls servers send two per
/// connection by default).
const TICKETS_PER_SERVER: usize = 4;
/// Server names kept; the first name inserted goes first when full.
const MAX_SERVERS: usize = 256;
/// RFC 9001 §4.6.1: the max_early_data_size that says "QUIC 0-RTT accepted".
pub const QUIC_EARLY_DATA_SENTINEL: u32 = u32::MAX;

#[derive(Default)]
struct Entry {
    kx_hint: Option<NamedGroup>,
    /// Oldest first, each with the QUIC version of the connection that got it.
    tickets: VecDeque<(u32, Tls13ClientSessionValue)>,
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
        // RFC 9369 §5: the ticket belongs to the version the connection is in now.
        let version = current_version();
        self.with_entry(&server_name, |e| {
            let mine = e.tickets.iter().filter(|t| t.0 == version).count();
            if mine >= TICKETS_PER_SERVER {
                if let Some(i) = e.tickets.iter().position(|t| t.0 == version) {
                    e.tickets.remove(i);
                }
            }
            e.tickets.push_back((version, value));
        });
    }

    /// Tickets are single use (RFC 8446 §C.4): the newest of the version the connection
    /// starts in is taken out (RFC 9369 §5: never one of another version).
    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        let version = current_version();
        let mut guard = self.lock();
        let e = guard.0.get_mut(&key(server_name))?;
        let i = e.tickets.iter().rposition(|t| t.0 == version)?;
        e.tickets.remove(i).map(|t| t.1)
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
/// sessions share; RFC 9369 §5: each QUIC version's sessions apart, see the module docs) and, with `zero_rtt`, accepts 0-RTT (RFC 9001 §4.6.1: the ticket's
/// max_early_data_size is the sentinel 0xffffffff), reading time from `clock`.
pub fn ticketing_server_config(
    base: &Arc<rustls::ServerConfig>,
    storage: Arc<dyn rustls::server::StoresServerSessions>,
    tickets: usize,
    zero_rtt: bool,
    clock: VirtualClock,
) -> Arc<rustls::ServerConfig> {
    let mut config = (**base).clone();
    config.session_storage = Arc::new(VersionScopedStorage(storage));
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

/// RFC 9369 §5: a server's session store seen per QUIC version. A stateful ticket is
/// the key of its session; the keys of sessions issued in a version other than 1 are
/// stored with that version in front, so a lookup from a connection of another version
/// misses and rustls falls back to a full handshake. Version 1 keys are stored as they
/// are (a v1-only server keeps what it kept before).
#[derive(Debug)]
struct VersionScopedStorage(Arc<dyn rustls::server::StoresServerSessions>);

fn scoped_key(key: &[u8]) -> Vec<u8> {
    let version = current_version();
    if version == VERSION_1 {
        return key.to_vec();
    }
    let mut k = Vec::with_capacity(4 + key.len());
    k.extend_from_slice(&version.to_be_bytes());
    k.extend_from_slice(key);
    k
}

impl rustls::server::StoresServerSessions for VersionScopedStorage {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        self.0.put(scoped_key(&key), value)
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.0.get(&scoped_key(key))
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.0.take(&scoped_key(key))
    }

    fn can_cache(&self) -> bool {
        self.0.can_cache()
    }
}
