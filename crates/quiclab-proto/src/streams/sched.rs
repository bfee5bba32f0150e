//! Which of the connection's scheduling sets a stream is in (`Streams::retx`, `fresh`,
//! `stream_blocked_pending`), kept beside the stream. `Streams::update_sched` runs
//! after every STREAM frame written, acknowledged or lost and after every write; a
//! bulk sender's answer is nearly always "as before" (in `fresh` only), so comparing
//! with the recorded membership replaces the three B-tree updates it made each time
//! (an insert of a present key, two removals from empty sets: issue 29,
//! docs/PERFORMANCE.md "streams"). Invariant: `Membership` equals the stream's
//! presence in the three sets; every change to those sets for a live stream goes
//! through [`sync`] or clears the flag where it removes (`write_blocked`).

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
    /// A STREAM_DATA_BLOCKED is due for the current limit (`stream_blocked_pending`).
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

/// The three sets, borrowed beside a stream's entry (disjoint fields of `Streams`).
pub(super) struct Sets<'a> {
    pub retx: &'a mut BTreeSet<StreamId>,
    pub fresh: &'a mut BTreeSet<StreamId>,
    pub blocked: &'a mut BTreeSet<StreamId>,
}

/// Brings stream `id`'s membership (`member`, its recorded one) in line with its send
/// part `s`: the general rule of `Streams::update_sched` for an entry already at hand.
pub(super) fn update(
    member: &mut Membership,
    s: Option<&SendStream>,
    id: StreamId,
    sets: Sets<'_>,
) {
    let now = Membership::of(s);
    let was = std::mem::replace(member, now);
    if now == was {
        return;
    }
    sync(sets.retx, id, was.lost, now.lost);
    sync(sets.fresh, id, was.fresh, now.fresh);
    sync(sets.blocked, id, was.blocked, now.blocked);
}

/// Moves stream `id` into or out of `set` when its membership changes from `was` to
/// `now`; nothing when it does not (the set holds `id` exactly when `was`).
pub(super) fn sync(set: &mut BTreeSet<StreamId>, id: StreamId, was: bool, now: bool) {
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
