//! The connection's three scheduling sets ([`Sets`]: `retx`, `fresh`, `blocked`) and
//! which of them a stream is in ([`Membership`]), kept beside the stream. `Streams::update_sched` runs
//! after every STREAM frame written, acknowledged or lost and after every write; a
//! bulk sender's answer is nearly always "as before" (in `fresh` only), so comparing
//! with the recorded membership replaces the three B-tree updates it made each time
//! (an insert of a present key, two removals from empty sets: issue 29,
//! docs/PERFORMANCE.md "streams"). Invariant: `Membership` equals the stream's
//! presence in the three sets; every change to those sets for a live stream goes
//! through [`Sets::update`] or clears the flag where it removes (`write_blocked`).
//! The sets hold live streams only: `Streams::close` takes a stream out of each
//! ([`Sets::remove`]), and a closed stream ID never comes back (local IDs are opened
//! once, in order; peer IDs only above the highest seen, RFC 9000 §3.2).

use super::send::SendStream;
use crate::wire::StreamId;
use std::collections::BTreeSet;

/// The sets a stream's send part belongs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Membership {
    /// Lost data or FIN to resend (`retx`).
    pub lost: bool,
    /// New data, or a FIN alone, within the stream's credit (`fresh`).
    pub fresh: bool,
    /// A STREAM_DATA_BLOCKED is due for the current limit (`blocked`).
    pub blocked: bool,
}

impl Membership {
    /// What the send part's state asks for; a stream without one is in no set.
    pub fn of(s: Option<&SendStream>) -> Self {
        match s {
            Some(s) => Membership {
                lost: s.has_lost(),
                fresh: s.has_fresh(),
                blocked: s.is_blocked() && s.blocked_sent != Some(s.max),
            },
            None => Membership::default(),
        }
    }
}

/// The streams with something to schedule, one field of `Streams` so that it can be
/// borrowed mutably beside a stream's entry (`&mut self.sets` next to
/// `self.streams.get_mut(..)`, disjoint fields).
#[derive(Debug, Default)]
pub(super) struct Sets {
    /// Streams with lost data or FIN to resend.
    pub retx: BTreeSet<StreamId>,
    /// Streams with new data, or a FIN alone, within their credit.
    pub fresh: BTreeSet<StreamId>,
    /// Streams owing a STREAM_DATA_BLOCKED for their current limit (RFC 9000 §19.13).
    pub blocked: BTreeSet<StreamId>,
}

impl Sets {
    /// Brings stream `id`'s membership (`member`, its recorded one) in line with its
    /// send part `s`: the rule of `Streams::update_sched` for an entry already at hand.
    pub fn update(&mut self, member: &mut Membership, s: Option<&SendStream>, id: StreamId) {
        let now = Membership::of(s);
        let was = std::mem::replace(member, now);
        if now == was {
            return;
        }
        sync(&mut self.retx, id, was.lost, now.lost);
        sync(&mut self.fresh, id, was.fresh, now.fresh);
        sync(&mut self.blocked, id, was.blocked, now.blocked);
    }

    /// Takes a stream that is going away out of every set.
    pub fn remove(&mut self, id: StreamId) {
        self.retx.remove(&id);
        self.fresh.remove(&id);
        self.blocked.remove(&id);
    }
}

/// Moves stream `id` into or out of `set` when its membership changes from `was` to
/// `now`; nothing when it does not (the set holds `id` exactly when `was`).
fn sync(set: &mut BTreeSet<StreamId>, id: StreamId, was: bool, now: bool) {
    match (was, now) {
        (false, true) => {
            set.insert(id);
        }
        (true, false) => {
            set.remove(&id);
        }
        _ => {}
    }
}
