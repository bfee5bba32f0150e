//! The sender's saved path parameters (draft-ietf-tsvwg-careful-resume §4.1
//! "Observing", §4.2 "Reconnaissance", §5.5 "Lifetime"): one set of (saved_cwnd,
//! saved_rtt, time) per Remote Endpoint, usable by one connection at a time, until
//! its Lifetime runs out. Time is passed in (`now`), never read.

use crate::time::Instant;
use std::collections::BTreeMap;
use std::time::Duration;

/// One observation of a path, as saved for a later connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SavedPathParams {
    /// saved_cwnd: capacity used by the observed connection, bytes.
    pub cwnd: u64,
    /// saved_rtt: its minimum RTT.
    pub rtt: Duration,
    /// When it was observed.
    pub saved_at: Instant,
}

/// The store's policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorePolicy {
    /// Lifetime of a saved set (draft §5.5; its example: RFC 7661's non-validated
    /// period, which "SHOULD NOT exceed five minutes"; default 300 s).
    pub lifetime: Duration,
    /// Observations below this many bytes are not saved (draft §4.1: "If the measured
    /// CWND is less than four times the IW, the sender can choose to not save").
    pub min_cwnd: u64,
    /// Most endpoints remembered; the oldest observation is forgotten first, so memory
    /// is bounded whoever connects (default 4096).
    pub capacity: usize,
}

impl StorePolicy {
    /// The defaults for a path whose initial window is `iw` bytes (min_cwnd = 4 · IW).
    pub fn with_iw(iw: u64) -> Self {
        StorePolicy {
            lifetime: Duration::from_secs(300),
            min_cwnd: iw.saturating_mul(4),
            capacity: 4096,
        }
    }
}

/// Why no saved parameters were handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("no saved parameters for this endpoint")]
    Unknown,
    /// draft §4.2 "Lifetime of saved CC parameters": too old; they were deleted.
    #[error("saved parameters past their lifetime")]
    Expired,
    /// draft §4.2 "Using saved_cwnd": another connection is using them.
    #[error("saved parameters in use by another connection")]
    InUse,
}

#[derive(Clone, Debug)]
struct Entry {
    params: SavedPathParams,
    in_use: bool,
}

/// Saved parameters keyed by Remote Endpoint identity `K` (e.g. the peer's address).
/// Call contract: `observe` when a connection ends (or at any point of stable
/// transfer); `claim` when a connection to the endpoint starts, then `release` when
/// it ends, or `forget` when it entered Safe Retreat (draft §4.5 "Removing saved
/// information").
#[derive(Clone, Debug)]
pub struct SavedPathStore<K: Ord + Clone> {
    policy: StorePolicy,
    entries: BTreeMap<K, Entry>,
}

impl<K: Ord + Clone> SavedPathStore<K> {
    pub fn new(policy: StorePolicy) -> Self {
        SavedPathStore {
            policy,
            entries: BTreeMap::new(),
        }
    }

    /// Saves (replacing: draft §4.1 "MUST NOT retain more than one set ... SHOULD be
    /// updated") an observation of `cwnd` bytes and minimum RTT `rtt`. Returns whether
    /// it was kept (observations under `min_cwnd`, or with no RTT, are not).
    pub fn observe(&mut self, key: K, now: Instant, cwnd: u64, rtt: Duration) -> bool {
        if cwnd < self.policy.min_cwnd || rtt.is_zero() || self.policy.capacity == 0 {
            return false;
        }
        if !self.entries.contains_key(&key) && self.entries.len() >= self.policy.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.params.saved_at)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.entries.remove(&k);
            }
        }
        let in_use = self.entries.get(&key).is_some_and(|e| e.in_use);
        let params = SavedPathParams {
            cwnd,
            rtt,
            saved_at: now,
        };
        self.entries.insert(key, Entry { params, in_use });
        true
    }

    /// The parameters for `key`, marked in use until `release` or `forget`. Expired
    /// ones are deleted (draft §4.2).
    pub fn claim(&mut self, key: &K, now: Instant) -> Result<SavedPathParams, ClaimError> {
        let e = self.entries.get_mut(key).ok_or(ClaimError::Unknown)?;
        if now.saturating_duration_since(e.params.saved_at) > self.policy.lifetime {
            self.entries.remove(key);
            return Err(ClaimError::Expired);
        }
        if e.in_use {
            return Err(ClaimError::InUse);
        }
        e.in_use = true;
        Ok(e.params)
    }

    /// The connection that claimed `key` no longer uses them.
    pub fn release(&mut self, key: &K) {
        if let Some(e) = self.entries.get_mut(key) {
            e.in_use = false;
        }
    }

    /// Deletes the parameters for `key` (Safe Retreat, or a configuration change).
    pub fn forget(&mut self, key: &K) {
        self.entries.remove(key);
    }

    /// Deletes every expired set.
    pub fn purge(&mut self, now: Instant) {
        let life = self.policy.lifetime;
        self.entries
            .retain(|_, e| now.saturating_duration_since(e.params.saved_at) <= life);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn store() -> SavedPathStore<&'static str> {
        SavedPathStore::new(StorePolicy {
            lifetime: Duration::from_secs(10),
            min_cwnd: 4 * 12_000,
            capacity: 2,
        })
    }

    #[test]
    fn lifetime_expires_and_deletes() {
        let mut s = store();
        assert!(s.observe("a", t(0), 1_000_000, Duration::from_millis(50)));
        let p = s.claim(&"a", t(10_000)).expect("within lifetime");
        assert_eq!(p.cwnd, 1_000_000);
        s.release(&"a");
        assert_eq!(s.claim(&"a", t(10_001)), Err(ClaimError::Expired));
        assert!(s.is_empty(), "expired parameters are deleted");
        assert_eq!(s.claim(&"a", t(10_002)), Err(ClaimError::Unknown));
    }

    #[test]
    fn one_connection_at_a_time() {
        let mut s = store();
        s.observe("a", t(0), 1_000_000, Duration::from_millis(50));
        assert!(s.claim(&"a", t(1)).is_ok());
        assert_eq!(s.claim(&"a", t(2)), Err(ClaimError::InUse));
        s.release(&"a");
        assert!(s.claim(&"a", t(3)).is_ok());
        s.forget(&"a");
        assert_eq!(s.claim(&"a", t(4)), Err(ClaimError::Unknown));
    }

    #[test]
    fn small_windows_not_saved_and_updates_replace() {
        let mut s = store();
        assert!(!s.observe("a", t(0), 47_999, Duration::from_millis(50)));
        assert!(s.observe("a", t(0), 48_000, Duration::from_millis(50)));
        assert!(s.observe("a", t(5), 96_000, Duration::from_millis(40)));
        assert_eq!(s.len(), 1);
        let p = s.claim(&"a", t(6)).unwrap();
        assert_eq!(
            (p.cwnd, p.rtt, p.saved_at),
            (96_000, Duration::from_millis(40), t(5))
        );
    }

    #[test]
    fn bounded_oldest_forgotten() {
        let mut s = store();
        s.observe("a", t(0), 100_000, Duration::from_millis(5));
        s.observe("b", t(1), 100_000, Duration::from_millis(5));
        s.observe("c", t(2), 100_000, Duration::from_millis(5));
        assert_eq!(s.len(), 2);
        assert_eq!(s.claim(&"a", t(3)), Err(ClaimError::Unknown));
        s.purge(t(11_002));
        assert!(s.is_empty());
    }
}
