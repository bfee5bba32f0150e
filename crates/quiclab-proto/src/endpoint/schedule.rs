//! Which connections an [`Endpoint`](super::Endpoint) has to look at, so that a turn of
//! its caller's loop costs O(active connections) rather than O(connections): a server
//! holding 10,000 idle connections should not visit all of them for every datagram.
//!
//! Three indexes, kept in sync by the endpoint after everything it does to a connection:
//! - every connection's deadline ([`Connection::poll_timeout`]) by time, for
//!   `handle_timeout` and `poll_timeout`;
//! - the connections that may have something to send (`ready`): woken by a datagram,
//!   a timer, or the application, and dropped once `poll_transmit` returned `None` and
//!   [`Connection::send_settled`] says it stays so;
//! - the connections handed out by `connection_mut` since the endpoint last looked
//!   (`stale`): the application may have changed their deadline or given them data.
//!
//! And one for the application: the connections touched since it last asked, so its
//! loop visits only connections that may have new events.
//!
//! Deadlines are re-read lazily: a connection the endpoint called into while it stays
//! ready (a datagram, a timer, a poll that sent) is only marked `unread`, and its
//! deadline is read when someone needs it (`next_deadline`, `due`, the admission count)
//! or when it settles. A sender polled for every datagram thus reads its deadline once
//! per burst instead of once per datagram (6-14% of the simulator's CPU per datagram).
//! Invariant: every unread connection is ready, so `ready_due` never needs its deadline.
//!
//! The point is to skip only polls that cannot send and cannot change anything; the
//! order in which connections send (the round robin) is unchanged.

use super::small_map::{SmallMap, SmallSet};
use super::ConnectionHandle;
use crate::connection::Connection;
use crate::time::Instant;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// The endpoint's connections.
type Connections = BTreeMap<ConnectionHandle, Box<Connection>>;

/// The indexes are [`SmallMap`]s: sorted `Vec`s while they hold few connections (one,
/// in every endpoint of the simulator), B-trees for a server with many, the same
/// ordered sets either way.
#[derive(Default)]
pub(super) struct Schedule {
    /// Each connection's deadline as last read; the key of its entry in `by_deadline`.
    deadline_of: SmallMap<ConnectionHandle, Instant>,
    by_deadline: SmallSet<(Instant, ConnectionHandle)>,
    /// Connections that may have something to send.
    ready: SmallSet<ConnectionHandle>,
    /// Handed to the application since the endpoint last re-read them.
    stale: SmallSet<ConnectionHandle>,
    /// Touched by the endpoint since the application last took the set.
    touched: SmallSet<ConnectionHandle>,
    /// Ready connections whose deadline (and handshaking flag) moved since it was last
    /// read: their entries in `deadline_of`/`by_deadline` are not to be trusted.
    unread: SmallSet<ConnectionHandle>,
    /// Connections mid-handshake (neither complete nor closed) as last read, so the
    /// admission limit is checked without a scan of every connection.
    handshaking: SmallSet<ConnectionHandle>,
}

impl Schedule {
    /// Re-reads `h`'s deadline after the endpoint called into it.
    pub fn update(&mut self, h: ConnectionHandle, conn: &Connection) {
        self.unread.remove(&h);
        if !conn.is_handshake_complete() && !conn.is_closed() {
            self.handshaking.insert(h, ());
        } else {
            self.handshaking.remove(&h);
        }
        let new = conn.poll_timeout();
        let old = self.deadline_of.get(&h).copied();
        if old == new {
            return;
        }
        if let Some(t) = old {
            self.by_deadline.remove(&(t, h));
        }
        match new {
            Some(t) => {
                self.by_deadline.insert((t, h), ());
                self.deadline_of.insert(h, t);
            }
            None => {
                self.deadline_of.remove(&h);
            }
        }
    }

    /// The endpoint called into `h`, which is (or is made) ready: its deadline is
    /// re-read when needed rather than now.
    pub fn mark_unread(&mut self, h: ConnectionHandle) {
        debug_assert!(self.ready.contains_key(&h), "unread connections stay ready");
        self.unread.insert(h, ());
    }

    /// Reads the deadline of every unread connection into the index.
    fn read_unread(&mut self, connections: &Connections) {
        // Popped one by one rather than taken: the set keeps its buffer.
        while let Some((h, ())) = self.unread.pop_first() {
            if let Some(conn) = connections.get(&h) {
                self.update(h, conn);
            }
        }
    }

    /// `h` received input (a datagram, a timer): it may send, and may have events.
    pub fn wake(&mut self, h: ConnectionHandle) {
        self.ready.insert(h, ());
        self.touched.insert(h, ());
    }

    /// The endpoint called into `h` without input (a poll): it may have events.
    pub fn touch(&mut self, h: ConnectionHandle) {
        self.touched.insert(h, ());
    }

    /// `h` answered `None` and stays quiet until its next input: its deadline is read
    /// now (an unread connection must stay ready).
    pub fn settle(&mut self, h: ConnectionHandle, connections: &Connections) {
        if let Some(conn) = connections.get(&h) {
            self.update(h, conn);
        }
        self.ready.remove(&h);
    }

    /// The application got `&mut` access to `h`.
    pub fn mark_stale(&mut self, h: ConnectionHandle) {
        self.stale.insert(h, ());
    }

    /// Re-reads every connection the application had access to: their deadline may
    /// have moved and they may have data to send: they become ready, their deadline
    /// unread. Called before each use of the indexes by a `&mut` endpoint method.
    pub fn refresh_stale(&mut self, connections: &Connections) {
        while let Some((h, ())) = self.stale.pop_first() {
            if connections.contains_key(&h) {
                self.ready.insert(h, ());
                self.unread.insert(h, ());
            }
        }
    }

    /// How many connections are mid-handshake (neither complete nor closed).
    pub fn handshaking(&mut self, connections: &Connections) -> usize {
        self.refresh_stale(connections);
        self.read_unread(connections);
        self.handshaking.len()
    }

    /// The earliest deadline, including connections not re-read since the
    /// application had them or since the endpoint called into them.
    pub fn next_deadline(&self, connections: &Connections) -> Option<Instant> {
        let stale = (self.stale.iter().chain(self.unread.iter()))
            .filter_map(|(h, ())| connections.get(h))
            .filter_map(|c| c.poll_timeout())
            .min();
        // The first indexed entry whose deadline is current (unread ones were read above).
        let indexed = (self.by_deadline.iter())
            .find(|((_, h), ())| !self.unread.contains_key(h))
            .map(|(&(t, _), ())| t);
        [stale, indexed].into_iter().flatten().min()
    }

    /// Connections whose deadline is at or before `now`, in handle order (unread
    /// deadlines are read first).
    pub fn due(&mut self, now: Instant, connections: &Connections) -> Vec<ConnectionHandle> {
        self.read_unread(connections);
        let mut due: Vec<ConnectionHandle> = self
            .by_deadline
            .range(
                Bound::Unbounded,
                Bound::Included((now, ConnectionHandle(u64::MAX))),
            )
            .map(|(&(_, h), ())| h)
            .collect();
        due.sort_unstable();
        due
    }

    /// Makes every connection with a due deadline ready: until its timer is handled,
    /// a poll may send (an ACK whose deadline passed) as it always could.
    pub fn ready_due(&mut self, now: Instant) {
        let due = Bound::Included((now, ConnectionHandle(u64::MAX)));
        for (&(_, h), ()) in self.by_deadline.range(Bound::Unbounded, due) {
            self.ready.insert(h, ());
        }
    }

    /// The first ready connection at or after `from` and before `until` (`None`: no
    /// upper bound), in handle order.
    pub fn next_ready(
        &self,
        from: ConnectionHandle,
        until: Option<ConnectionHandle>,
    ) -> Option<ConnectionHandle> {
        let end = match until {
            Some(end) if end <= from => return None,
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let mut range = self.ready.range(Bound::Included(from), end);
        range.next().map(|(&h, ())| h)
    }

    /// The handles touched since the last call, in handle order.
    pub fn take_touched(&mut self) -> BTreeSet<ConnectionHandle> {
        let mut touched = BTreeSet::new();
        while let Some((h, ())) = self.touched.pop_first() {
            touched.insert(h);
        }
        touched
    }

    /// `h` was removed from the endpoint.
    pub fn forget(&mut self, h: ConnectionHandle) {
        if let Some(t) = self.deadline_of.remove(&h) {
            self.by_deadline.remove(&(t, h));
        }
        self.ready.remove(&h);
        self.stale.remove(&h);
        self.unread.remove(&h);
        self.touched.remove(&h);
        self.handshaking.remove(&h);
    }
}
