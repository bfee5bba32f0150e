//! Which connections an [`Endpoint`](super::Endpoint) has to look at, so that a turn of
//! its caller's loop costs O(active connections) rather than O(connections): a server
//! holding 10,000 idle connections should not visit all of them for every datagram.
//!
//! Three indexes, kept in sync by the endpoint after everything it does to a connection:
//! - every connection's deadline ([`Connection::poll_timeout`]) by time, for
//!   `handle_timeout` and `poll_timeout`;
//! - the connections that may have something to send (`ready`): woken by a datagram,
//!   a timer, or the application, and dropped once `poll_transmit` returned `None` and
//!   [`Connection::send_settled`] says it stays so. Dropped lazily: the settled
//!   connection's flag goes off and its entry stays until the round robin next meets
//!   it (and skips it, as it would a missing entry) or it is woken again; in the
//!   simulator it is woken first, by the next datagram, so each quiet spell saves a
//!   remove and an insert;
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

use super::small_map::SmallSet;
use super::ConnectionHandle;
use crate::connection::Connection;
use crate::time::Instant;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// A connection and what the schedule knows of it.
pub(super) struct Slot {
    pub conn: Box<Connection>,
    marks: Marks,
}

impl Slot {
    /// A connection in none of the indexes yet.
    pub fn new(conn: Connection) -> Self {
        Slot {
            conn: Box::new(conn),
            marks: Marks::default(),
        }
    }
}

/// Which of the schedule's sets hold the connection, and the deadline it is indexed
/// under in `by_deadline`. Kept beside the connection, so that "already there?" is one
/// field read rather than a search: most of the endpoint's calls would insert a
/// connection into a set that already holds it (a datagram wakes a connection that is
/// ready, every poll marks it unread again), and those inserts are skipped.
/// Invariant: each flag is true exactly when the set of its name holds the handle
/// (for `ready`: `listed`; `ready` implies `listed`), and `deadline` is `Some(t)`
/// exactly when `by_deadline` holds `(t, handle)` (`Schedule::check` in the tests).
#[derive(Default)]
struct Marks {
    /// May have something to send.
    ready: bool,
    /// In the `ready` set: ready, or settled with its entry not yet dropped.
    listed: bool,
    unread: bool,
    stale: bool,
    touched: bool,
    handshaking: bool,
    deadline: Option<Instant>,
}

/// The endpoint's connections.
pub(super) type Connections = BTreeMap<ConnectionHandle, Slot>;

/// The indexes are [`SmallSet`]s: sorted `Vec`s while they hold few connections (one,
/// in every endpoint of the simulator), B-trees for a server with many, the same
/// ordered sets either way.
#[derive(Default)]
pub(super) struct Schedule {
    /// Each connection's deadline as last read (`Marks::deadline`), by time.
    by_deadline: SmallSet<(Instant, ConnectionHandle)>,
    /// Connections that may have something to send, and settled ones not yet dropped
    /// (`Marks::listed`; the round robin skips those whose `Marks::ready` is off).
    ready: SmallSet<ConnectionHandle>,
    /// Handed to the application since the endpoint last re-read them.
    stale: SmallSet<ConnectionHandle>,
    /// Touched by the endpoint since the application last took the set.
    touched: SmallSet<ConnectionHandle>,
    /// Ready connections whose deadline (and handshaking flag) moved since it was last
    /// read: their entries in `by_deadline` are not to be trusted.
    unread: SmallSet<ConnectionHandle>,
    /// Connections mid-handshake (neither complete nor closed) as last read, so the
    /// admission limit is checked without a scan of every connection.
    handshaking: SmallSet<ConnectionHandle>,
}

/// Puts `h` into `set` unless its flag says it is there already.
fn put(set: &mut SmallSet<ConnectionHandle>, flag: &mut bool, h: ConnectionHandle) {
    if !*flag {
        *flag = true;
        set.insert(h, ());
    }
}

/// Makes `h` ready: its entry in `ready` is added unless it is there already (ready,
/// or settled and not yet dropped).
fn put_ready(ready: &mut SmallSet<ConnectionHandle>, m: &mut Marks, h: ConnectionHandle) {
    m.ready = true;
    put(ready, &mut m.listed, h);
}

/// Takes `h` out of `set` unless its flag says it is not there.
fn take(set: &mut SmallSet<ConnectionHandle>, flag: &mut bool, h: ConnectionHandle) {
    if *flag {
        *flag = false;
        set.remove(&h);
    }
}

impl Schedule {
    /// Re-reads `h`'s deadline after the endpoint called into it.
    pub fn update(&mut self, h: ConnectionHandle, slot: &mut Slot) {
        let (conn, m) = (&slot.conn, &mut slot.marks);
        take(&mut self.unread, &mut m.unread, h);
        if !conn.is_handshake_complete() && !conn.is_closed() {
            put(&mut self.handshaking, &mut m.handshaking, h);
        } else {
            take(&mut self.handshaking, &mut m.handshaking, h);
        }
        let new = conn.poll_timeout();
        if m.deadline == new {
            return;
        }
        match (m.deadline, new) {
            (Some(old), Some(t)) => {
                self.by_deadline.rekey(&(old, h), (t, h));
            }
            (Some(old), None) => {
                self.by_deadline.remove(&(old, h));
            }
            (None, Some(t)) => {
                self.by_deadline.insert((t, h), ());
            }
            (None, None) => {}
        }
        m.deadline = new;
    }

    /// After the endpoint called into `h`. `input`: it received a datagram or a timer,
    /// so it may send and may have events for the application; otherwise (a poll) the
    /// application is told only if the poll sent something (room in the send buffer)
    /// or queued an event, so an idle connection the application looked at does not
    /// come back every turn. The connection is ready afterwards (woken, or just
    /// polled), so its deadline is only marked unread (read lazily).
    pub fn called(&mut self, h: ConnectionHandle, slot: &mut Slot, input: bool, sent: bool) {
        if input {
            self.wake(h, slot);
        } else if sent || slot.conn.has_events() {
            put(&mut self.touched, &mut slot.marks.touched, h);
        }
        self.mark_unread(h, slot);
    }

    /// The endpoint called into `h`, which is (or is made) ready: its deadline is
    /// re-read when needed rather than now.
    fn mark_unread(&mut self, h: ConnectionHandle, slot: &mut Slot) {
        debug_assert!(slot.marks.ready, "unread connections stay ready");
        put(&mut self.unread, &mut slot.marks.unread, h);
    }

    /// Reads the deadline of every unread connection into the index.
    fn read_unread(&mut self, connections: &mut Connections) {
        // Popped one by one rather than taken: the set keeps its buffer.
        while let Some((h, ())) = self.unread.pop_first() {
            if let Some(slot) = connections.get_mut(&h) {
                slot.marks.unread = false;
                self.update(h, slot);
            }
        }
    }

    /// `h` received input (a datagram, a timer): it may send, and may have events.
    pub fn wake(&mut self, h: ConnectionHandle, slot: &mut Slot) {
        put_ready(&mut self.ready, &mut slot.marks, h);
        put(&mut self.touched, &mut slot.marks.touched, h);
    }

    /// `h` answered `None` and stays quiet until its next input: its deadline is read
    /// now (an unread connection must stay ready). Its entry in `ready` stays (listed,
    /// not ready) until [`Self::skip_settled`] drops it or a wake finds it there.
    pub fn settle(&mut self, h: ConnectionHandle, slot: &mut Slot) {
        self.update(h, slot);
        slot.marks.ready = false;
    }

    /// Whether `h`, returned by [`Self::next_ready`], is a settled connection whose
    /// entry was left in `ready`: then the entry is dropped now, and the caller moves
    /// on past `h` without polling it, exactly as if the entry had been dropped when
    /// it settled (`next_ready` would have returned the next entry after `h`, which is
    /// where the caller's cursor goes). So each entry is dropped at most once per quiet
    /// spell, and the set never holds more than one entry a connection.
    pub fn skip_settled(&mut self, h: ConnectionHandle, slot: &mut Slot) -> bool {
        let m = &mut slot.marks;
        if m.ready {
            return false;
        }
        take(&mut self.ready, &mut m.listed, h);
        true
    }

    /// The application got `&mut` access to `h`.
    ///
    /// A connection that is ready and unread already is not marked: being stale would
    /// only make it ready and unread at the next refresh, and `next_deadline` reads an
    /// unread connection's deadline live just as a stale one's. Nothing clears either
    /// flag before that refresh (`settle` and `read_unread` run only after
    /// `refresh_stale` in the same endpoint call), so the mark could change nothing.
    pub fn mark_stale(&mut self, h: ConnectionHandle, slot: &mut Slot) {
        let m = &mut slot.marks;
        if !(m.ready && m.unread) {
            put(&mut self.stale, &mut m.stale, h);
        }
    }

    /// Re-reads every connection the application had access to: their deadline may
    /// have moved and they may have data to send: they become ready, their deadline
    /// unread. Called before each use of the indexes by a `&mut` endpoint method.
    pub fn refresh_stale(&mut self, connections: &mut Connections) {
        if self.stale.len() == 0 {
            return;
        }
        while let Some((h, ())) = self.stale.pop_first() {
            if let Some(slot) = connections.get_mut(&h) {
                let m = &mut slot.marks;
                m.stale = false;
                put_ready(&mut self.ready, m, h);
                put(&mut self.unread, &mut m.unread, h);
            }
        }
    }

    /// How many connections are mid-handshake (neither complete nor closed).
    pub fn handshaking(&mut self, connections: &mut Connections) -> usize {
        self.refresh_stale(connections);
        self.read_unread(connections);
        self.handshaking.len()
    }

    /// The earliest deadline, including connections not re-read since the
    /// application had them or since the endpoint called into them.
    pub fn next_deadline(&self, connections: &Connections) -> Option<Instant> {
        if self.stale.len() == 0 && self.unread.len() == 0 {
            // What the general case below answers when both sets are empty.
            return self.by_deadline.first().map(|&(t, _)| t);
        }
        let stale = (self.stale.iter().chain(self.unread.iter()))
            .filter_map(|(h, ())| connections.get(h))
            .filter_map(|s| s.conn.poll_timeout())
            .min();
        // The first indexed entry whose deadline is current (unread ones were read above).
        let indexed = (self.by_deadline.iter())
            .find(|((_, h), ())| !self.unread.contains_key(h))
            .map(|(&(t, _), ())| t);
        [stale, indexed].into_iter().flatten().min()
    }

    /// Connections whose deadline is at or before `now`, in handle order (unread
    /// deadlines are read first).
    pub fn due(&mut self, now: Instant, connections: &mut Connections) -> Vec<ConnectionHandle> {
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
    pub fn ready_due(&mut self, now: Instant, connections: &mut Connections) {
        // The earliest entry decides whether any is due (entries sort by time first).
        match self.by_deadline.first() {
            Some(&(t, _)) if t <= now => {}
            _ => return,
        }
        let due = Bound::Included((now, ConnectionHandle(u64::MAX)));
        for (&(_, h), ()) in self.by_deadline.range(Bound::Unbounded, due) {
            // Every indexed connection has its slot (`forget` removes its entry).
            if let Some(slot) = connections.get_mut(&h) {
                put_ready(&mut self.ready, &mut slot.marks, h);
            }
        }
    }

    /// The first listed connection (ready, or settled with its entry left: see
    /// [`Self::skip_settled`]) at or after `from` and before `until` (`None`: no
    /// upper bound), in handle order.
    pub fn next_ready(
        &self,
        from: ConnectionHandle,
        until: Option<ConnectionHandle>,
    ) -> Option<ConnectionHandle> {
        if until.is_some_and(|end| end <= from) {
            return None;
        }
        let h = *self.ready.first_at_or_after(&from)?;
        until.is_none_or(|end| h < end).then_some(h)
    }

    /// The handles touched since the last call, in handle order.
    pub fn take_touched(&mut self, connections: &mut Connections) -> BTreeSet<ConnectionHandle> {
        let mut touched = BTreeSet::new();
        while let Some((h, ())) = self.touched.pop_first() {
            if let Some(slot) = connections.get_mut(&h) {
                slot.marks.touched = false;
            }
            touched.insert(h);
        }
        touched
    }

    /// `h` was removed from the endpoint; `slot` is what it held (`None` only if the
    /// endpoint lost it without telling: then its deadline entry cannot be found).
    pub fn forget(&mut self, h: ConnectionHandle, slot: Option<&Slot>) {
        if let Some(t) = slot.and_then(|s| s.marks.deadline) {
            self.by_deadline.remove(&(t, h));
        }
        self.ready.remove(&h);
        self.stale.remove(&h);
        self.unread.remove(&h);
        self.touched.remove(&h);
        self.handshaking.remove(&h);
    }
}

impl Schedule {
    /// Whether every connection's [`Marks`] agree with the sets (the invariant the
    /// skipped inserts and removes rely on): `Err` names the first disagreement.
    pub fn check(&self, connections: &Connections) -> Result<(), String> {
        let sets = [
            ("ready", &self.ready),
            ("unread", &self.unread),
            ("stale", &self.stale),
            ("touched", &self.touched),
            ("handshaking", &self.handshaking),
        ];
        for (name, set) in sets {
            if let Some((h, ())) = set.iter().find(|(h, ())| !connections.contains_key(h)) {
                return Err(format!("{name} holds {h:?}, which has no slot"));
            }
        }
        let mut indexed = 0;
        for (&h, slot) in connections {
            let m = &slot.marks;
            if m.ready && !m.listed {
                return Err(format!("{h:?} is ready but not in the ready set"));
            }
            let flags = [m.listed, m.unread, m.stale, m.touched, m.handshaking];
            for ((name, set), flag) in sets.iter().zip(flags) {
                if set.contains_key(&h) != flag {
                    return Err(format!("{h:?}: {name} flag {flag}, set disagrees"));
                }
            }
            if let Some(t) = m.deadline {
                indexed += 1;
                if !self.by_deadline.contains_key(&(t, h)) {
                    return Err(format!("{h:?}: deadline {t:?} not indexed"));
                }
            }
        }
        if indexed != self.by_deadline.len() {
            return Err(format!(
                "{} deadlines indexed, {indexed} marked",
                self.by_deadline.len()
            ));
        }
        Ok(())
    }
}
