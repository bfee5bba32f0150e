//! The QPACK encoder (RFC 9204 §2.1, §4.3, §4.5): encodes field lists, inserting into
//! its dynamic table when the peer allows one (capacity = min(our knob, the peer's
//! SETTINGS_QPACK_MAX_TABLE_CAPACITY)), referencing unacknowledged entries only while
//! the peer's SETTINGS_QPACK_BLOCKED_STREAMS allows another blocked stream, and never
//! evicting an entry that an unacknowledged section references (§2.1.1).

use super::prefix::{encode_int, encode_string, Cursor, PrimError};
use super::static_table::{self, StaticMatch};
use super::table::{entry_size, DynamicTable, Entry};
use super::{max_entries, Field};
use crate::error::{code, H3Error};
use std::collections::{BTreeMap, VecDeque};

/// A field section sent and not yet acknowledged.
#[derive(Clone, Copy, Debug)]
struct Section {
    ric: u64,
    /// Oldest absolute index referenced (pins it and everything newer), if any.
    min_ref: Option<u64>,
}

/// The encoder side of one connection.
pub struct Encoder {
    table: DynamicTable,
    /// Our knob: the most table we are willing to use (0 = static only).
    knob: u64,
    /// The peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY (0 until its SETTINGS arrive).
    peer_max_capacity: u64,
    peer_max_blocked: u64,
    known_received: u64,
    sections: BTreeMap<u64, VecDeque<Section>>,
    /// Encoder-stream bytes to send.
    out: Vec<u8>,
    /// Decoder-stream bytes not yet forming a whole instruction.
    pending: Vec<u8>,
}

/// Fields larger than this share of the capacity are never inserted: they would
/// flush the table for one use.
const INSERT_SHARE: usize = 2;

impl Encoder {
    /// An encoder that will use at most `knob` bytes of dynamic table.
    pub fn new(knob: u64) -> Self {
        Encoder {
            table: DynamicTable::default(),
            knob,
            peer_max_capacity: 0,
            peer_max_blocked: 0,
            known_received: 0,
            sections: BTreeMap::new(),
            out: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Applies the peer's SETTINGS (RFC 9204 §5): sets our table capacity, sending
    /// Set Dynamic Table Capacity when it is not zero.
    pub fn on_peer_settings(&mut self, max_capacity: u64, max_blocked: u64) {
        self.peer_max_capacity = max_capacity;
        self.peer_max_blocked = max_blocked;
        let cap = self.knob.min(max_capacity);
        let cap_usize = usize::try_from(cap).unwrap_or(usize::MAX);
        if cap > 0 && self.table.set_capacity(cap_usize, u64::MAX) {
            encode_int(&mut self.out, 0x20, 5, cap);
        }
    }

    pub fn table_size(&self) -> usize {
        self.table.size()
    }
    pub fn insert_count(&self) -> u64 {
        self.table.inserted()
    }
    pub fn known_received_count(&self) -> u64 {
        self.known_received
    }

    /// Streams with a section the decoder may still be blocked on.
    pub fn blocking_streams(&self) -> usize {
        let kr = self.known_received;
        self.sections
            .values()
            .filter(|q| q.iter().any(|s| s.ric > kr))
            .count()
    }

    /// Oldest entry an unacknowledged section references.
    fn keep_from(&self, current: Option<u64>) -> u64 {
        self.sections
            .values()
            .flatten()
            .filter_map(|s| s.min_ref)
            .chain(current)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Encodes a field section for `stream` (§4.5); encoder-stream instructions it
    /// needs are queued for [`Encoder::take_instructions`].
    pub fn encode(&mut self, stream: u64, fields: &[Field]) -> Vec<u8> {
        let base = self.table.inserted();
        let kr = self.known_received;
        let already_blocking = self
            .sections
            .get(&stream)
            .is_some_and(|q| q.iter().any(|s| s.ric > kr));
        let can_block =
            already_blocking || (self.blocking_streams() as u64) < self.peer_max_blocked;
        let mut body = Vec::new();
        let mut ric = 0u64;
        let mut min_ref: Option<u64> = None;
        for f in fields {
            let used = self.field(f, base, can_block, min_ref, &mut body);
            if let Some(abs) = used {
                ric = ric.max(abs + 1);
                min_ref = Some(min_ref.map_or(abs, |m| m.min(abs)));
            }
        }
        let mut out = Vec::with_capacity(body.len() + 4);
        // Section prefix (§4.5.1).
        if ric == 0 {
            out.extend_from_slice(&[0, 0]);
        } else {
            let full_range = 2 * max_entries(self.peer_max_capacity);
            encode_int(&mut out, 0, 8, ric % full_range + 1);
            if base >= ric {
                encode_int(&mut out, 0, 7, base - ric);
            } else {
                encode_int(&mut out, 0x80, 7, ric - base - 1);
            }
            self.sections
                .entry(stream)
                .or_default()
                .push_back(Section { ric, min_ref });
        }
        out.extend_from_slice(&body);
        out
    }

    /// Encodes one field line; returns the absolute dynamic index it references.
    fn field(
        &mut self,
        f: &Field,
        base: u64,
        can_block: bool,
        min_ref: Option<u64>,
        out: &mut Vec<u8>,
    ) -> Option<u64> {
        let stat = static_table::find(&f.name, &f.value);
        if let StaticMatch::Full(i) = stat {
            encode_int(out, 0xc0, 6, i as u64); // Indexed, static (§4.5.2)
            return None;
        }
        let usable = |abs: u64, kr: u64| abs < kr || can_block;
        let dynamic = self.table.find(&f.name, &f.value);
        if let Some((abs, true)) = dynamic {
            if usable(abs, self.known_received) {
                indexed_dynamic(out, abs, base);
                return Some(abs);
            }
        }
        if let Some(abs) = self.try_insert(f, &stat, dynamic, min_ref) {
            if can_block {
                indexed_dynamic(out, abs, base);
                return Some(abs);
            }
        }
        // Literal, with a name reference when there is one we may use (§4.5.4–§4.5.6).
        match (stat, dynamic) {
            (StaticMatch::Name(i), _) | (StaticMatch::Full(i), _) => {
                encode_int(out, 0x50, 4, i as u64);
                encode_string(out, 0, 7, &f.value);
                None
            }
            (StaticMatch::None, Some((abs, _))) if usable(abs, self.known_received) => {
                if abs < base {
                    encode_int(out, 0x40, 4, base - abs - 1);
                } else {
                    encode_int(out, 0x00, 3, abs - base);
                }
                encode_string(out, 0, 7, &f.value);
                Some(abs)
            }
            _ => {
                encode_string(out, 0x20, 3, &f.name);
                encode_string(out, 0, 7, &f.value);
                None
            }
        }
    }

    /// Inserts `f` if the table has room without evicting pinned entries (§2.1.1).
    fn try_insert(
        &mut self,
        f: &Field,
        stat: &StaticMatch,
        dynamic: Option<(u64, bool)>,
        min_ref: Option<u64>,
    ) -> Option<u64> {
        let size = entry_size(&f.name, &f.value);
        let cap = self.table.capacity();
        if cap == 0 || size > cap / INSERT_SHARE {
            return None;
        }
        // A name reference into the dynamic table must itself stay live until the
        // decoder processed this instruction; it is older than the insert, so pin it.
        let name_ref = match (stat, dynamic) {
            (StaticMatch::Name(i), _) => Some((true, *i as u64)),
            (_, Some((abs, _))) => Some((false, abs)),
            _ => None,
        };
        let mut keep = self.keep_from(min_ref);
        if let Some((false, abs)) = name_ref {
            keep = keep.min(abs);
        }
        if !self.table.can_insert(size, keep) {
            return None;
        }
        let inserted = self.table.inserted();
        match name_ref {
            Some((true, i)) => {
                encode_int(&mut self.out, 0xc0, 6, i);
                encode_string(&mut self.out, 0, 7, &f.value);
            }
            Some((false, abs)) => {
                encode_int(&mut self.out, 0x80, 6, inserted - abs - 1);
                encode_string(&mut self.out, 0, 7, &f.value);
            }
            None => {
                encode_string(&mut self.out, 0x40, 5, &f.name);
                encode_string(&mut self.out, 0, 7, &f.value);
            }
        }
        self.table.insert(Entry {
            name: f.name.clone(),
            value: f.value.clone(),
        });
        Some(inserted)
    }

    /// Encoder-stream bytes to send.
    pub fn take_instructions(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Bytes from the peer's decoder stream (§4.4). Errors are connection errors
    /// (QPACK_DECODER_STREAM_ERROR).
    pub fn on_decoder_stream(&mut self, data: &[u8]) -> Result<(), H3Error> {
        self.pending.extend_from_slice(data);
        let mut start = 0;
        let fail = |why: &str| H3Error::new(code::QPACK_DECODER_STREAM_ERROR, why);
        loop {
            let mut c = Cursor::new(&self.pending[start..]);
            let Ok(b) = c.peek() else { break };
            let (kind, n) = match b {
                b if b & 0x80 != 0 => (0, 7),
                b if b & 0x40 != 0 => (1, 6),
                _ => (2, 6),
            };
            let v = match c.int(n) {
                Ok(v) => v,
                Err(PrimError::Incomplete) => break,
                Err(_) => return Err(fail("integer overflow")),
            };
            start += c.pos;
            match kind {
                0 => {
                    // Section Acknowledgment (§4.4.1).
                    let s = self
                        .sections
                        .get_mut(&v)
                        .and_then(|q| q.pop_front())
                        .ok_or_else(|| fail("acknowledgment of no outstanding section"))?;
                    self.known_received = self.known_received.max(s.ric);
                    if self.sections.get(&v).is_some_and(|q| q.is_empty()) {
                        self.sections.remove(&v);
                    }
                }
                1 => {
                    // Stream Cancellation (§4.4.2).
                    self.sections.remove(&v);
                }
                _ => {
                    // Insert Count Increment (§4.4.3).
                    let new = self.known_received.checked_add(v);
                    match new {
                        Some(k) if v > 0 && k <= self.table.inserted() => self.known_received = k,
                        _ => return Err(fail("bad insert count increment")),
                    }
                }
            }
        }
        self.pending.drain(..start);
        // Instructions are at most ~10 bytes; more pending means garbage.
        if self.pending.len() > 16 {
            return Err(fail("decoder instruction too long"));
        }
        Ok(())
    }
}

/// Indexed field line for a dynamic entry, pre- or post-base (§4.5.2, §4.5.3).
fn indexed_dynamic(out: &mut Vec<u8>, abs: u64, base: u64) {
    if abs < base {
        encode_int(out, 0x80, 6, base - abs - 1);
    } else {
        encode_int(out, 0x10, 4, abs - base);
    }
}
