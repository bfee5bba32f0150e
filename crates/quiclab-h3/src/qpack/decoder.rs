//! The QPACK decoder (RFC 9204 §2.2, §4.3–§4.5): applies encoder-stream instructions to
//! its dynamic table, decodes field sections (or reports them blocked on inserts not
//! yet received), and produces decoder-stream instructions. Memory is bounded: the
//! table by our advertised capacity, blocked streams by our advertised limit, partial
//! instructions and decoded sections by the maximum field section size.

use super::prefix::{encode_int, Cursor, PrimError};
use super::table::{entry_size, DynamicTable, Entry};
use super::{max_entries, static_table, Field};
use crate::error::{code, H3Error};
use std::collections::BTreeSet;

/// Result of decoding a field section.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    Fields(Vec<Field>),
    /// Waiting for inserts: retry when [`Decoder::insert_count`] reaches this.
    Blocked(u64),
}

/// The decoder side of one connection.
pub struct Decoder {
    table: DynamicTable,
    /// Our SETTINGS_QPACK_MAX_TABLE_CAPACITY.
    max_capacity: u64,
    /// Our SETTINGS_QPACK_BLOCKED_STREAMS.
    max_blocked: usize,
    /// Our SETTINGS_MAX_FIELD_SECTION_SIZE: bounds decoded sections and literals.
    max_section: usize,
    /// Streams currently blocked.
    blocked: BTreeSet<u64>,
    /// Encoder-stream bytes not yet forming a whole instruction.
    pending: Vec<u8>,
    /// Inserts the encoder knows we received (what we acknowledged).
    acked: u64,
    /// Decoder-stream bytes to send.
    out: Vec<u8>,
}

/// Why an encoder instruction failed.
enum Instr {
    Prim(PrimError),
    Invalid(&'static str),
}

impl From<PrimError> for Instr {
    fn from(e: PrimError) -> Self {
        Instr::Prim(e)
    }
}

fn dfail(reason: &str) -> H3Error {
    H3Error::new(code::QPACK_DECOMPRESSION_FAILED, reason)
}
fn efail(reason: &str) -> H3Error {
    H3Error::new(code::QPACK_ENCODER_STREAM_ERROR, reason)
}

impl Decoder {
    /// A decoder advertising `max_capacity` (0 = static table only), `max_blocked`
    /// blocked streams and `max_section` bytes of decoded field section.
    pub fn new(max_capacity: u64, max_blocked: u64, max_section: usize) -> Self {
        Decoder {
            table: DynamicTable::default(),
            max_capacity,
            max_blocked: usize::try_from(max_blocked).unwrap_or(usize::MAX),
            max_section,
            blocked: BTreeSet::new(),
            pending: Vec::new(),
            acked: 0,
            out: Vec::new(),
        }
    }

    pub fn insert_count(&self) -> u64 {
        self.table.inserted()
    }
    pub fn table_size(&self) -> usize {
        self.table.size()
    }
    /// Streams blocked now (never above the advertised limit).
    pub fn blocked_streams(&self) -> usize {
        self.blocked.len()
    }

    /// Bytes from the peer's encoder stream (RFC 9204 §4.3). Errors are connection
    /// errors (QPACK_ENCODER_STREAM_ERROR).
    pub fn on_encoder_stream(&mut self, data: &[u8]) -> Result<(), H3Error> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.extend_from_slice(data);
        let mut start = 0;
        loop {
            let mut c = Cursor::new(&pending[start..]);
            if c.is_empty() {
                break;
            }
            match self.instruction(&mut c) {
                Ok(()) => start += c.pos,
                Err(Instr::Prim(PrimError::Incomplete)) => break,
                Err(Instr::Prim(e)) => return Err(efail(&format!("instruction: {e:?}"))),
                Err(Instr::Invalid(why)) => return Err(efail(why)),
            }
        }
        pending.drain(..start);
        self.pending = pending;
        // A partial instruction can hold at most two literals of bounded length.
        if self.pending.len() > 2 * self.max_section + 32 {
            return Err(efail("encoder instruction too long"));
        }
        Ok(())
    }

    /// Parses and applies one instruction; `Incomplete` leaves the table untouched.
    fn instruction(&mut self, c: &mut Cursor) -> Result<(), Instr> {
        let b = c.peek()?;
        let max = self.max_section;
        let entry = if b & 0x80 != 0 {
            // Insert with name reference (§4.3.2).
            let is_static = b & 0x40 != 0;
            let idx = c.int(6)?;
            let value = c.string(7, max)?;
            let name = if is_static {
                static_table::get(idx).map(|(n, _)| n.as_bytes().to_vec())
            } else {
                self.relative(idx).map(|e| e.name.clone())
            };
            Some(name.map(|name| Entry { name, value }))
        } else if b & 0x40 != 0 {
            // Insert with literal name (§4.3.3).
            let name = c.string(5, max)?;
            let value = c.string(7, max)?;
            Some(Some(Entry { name, value }))
        } else if b & 0x20 != 0 {
            // Set dynamic table capacity (§4.3.1).
            let cap = c.int(5)?;
            self.set_capacity(cap)
                .map_err(|_| Instr::Invalid("capacity above our maximum"))?;
            None
        } else {
            // Duplicate (§4.3.4).
            let idx = c.int(5)?;
            Some(self.relative(idx).cloned())
        };
        if let Some(entry) = entry {
            let entry = entry.ok_or(Instr::Invalid("reference to a missing entry"))?;
            if !self.table.insert(entry) {
                return Err(Instr::Invalid("entry larger than the capacity"));
            }
        }
        Ok(())
    }

    fn set_capacity(&mut self, cap: u64) -> Result<(), ()> {
        if cap > self.max_capacity {
            return Err(());
        }
        let cap = usize::try_from(cap).map_err(|_| ())?;
        // The decoder never pins entries: eviction is the encoder's to police.
        self.table.set_capacity(cap, u64::MAX);
        Ok(())
    }

    /// The entry at a relative index of the encoder stream (§3.2.5).
    fn relative(&self, idx: u64) -> Option<&Entry> {
        let abs = self.table.inserted().checked_sub(idx.checked_add(1)?)?;
        self.table.get(abs)
    }

    /// Decodes the field section of `stream` (§4.5). `Blocked` registers the stream as
    /// blocked (a connection error past our limit, §2.1.2); call again once enough
    /// inserts arrived. On success with dynamic references, a Section Acknowledgment
    /// is queued.
    pub fn decode(&mut self, stream: u64, block: &[u8]) -> Result<Decoded, H3Error> {
        let mut c = Cursor::new(block);
        let ric = self.required_insert_count(&mut c)?;
        if ric > self.table.inserted() {
            if !self.blocked.contains(&stream) {
                if self.blocked.len() >= self.max_blocked {
                    return Err(dfail("too many blocked streams"));
                }
                self.blocked.insert(stream);
            }
            return Ok(Decoded::Blocked(ric));
        }
        self.blocked.remove(&stream);
        let sign = c.peek().map_err(|_| dfail("truncated prefix"))? & 0x80 != 0;
        let delta = c.int(7).map_err(|_| dfail("bad base"))?;
        let base = if sign {
            ric.checked_sub(delta)
                .and_then(|v| v.checked_sub(1))
                .ok_or_else(|| dfail("negative base"))?
        } else {
            ric.checked_add(delta)
                .ok_or_else(|| dfail("base overflow"))?
        };
        let mut fields = Vec::new();
        let mut size = 0usize;
        while !c.is_empty() {
            let f = self.field_line(&mut c, ric, base)?;
            size = size.saturating_add(f.size());
            if size > self.max_section {
                return Err(H3Error::new(
                    code::H3_EXCESSIVE_LOAD,
                    "field section too large",
                ));
            }
            fields.push(f);
        }
        if ric > 0 {
            encode_int(&mut self.out, 0x80, 7, stream); // Section Acknowledgment §4.4.1
            self.acked = self.acked.max(ric);
        }
        Ok(Decoded::Fields(fields))
    }

    /// Required Insert Count from the section prefix (§4.5.1.1).
    fn required_insert_count(&self, c: &mut Cursor) -> Result<u64, H3Error> {
        let enc = c.int(8).map_err(|_| dfail("bad required insert count"))?;
        if enc == 0 {
            return Ok(0);
        }
        let max_entries = max_entries(self.max_capacity);
        let full_range = 2 * max_entries;
        if enc > full_range {
            return Err(dfail("required insert count out of range"));
        }
        let max_value = self.table.inserted() + max_entries;
        let max_wrapped = (max_value / full_range) * full_range;
        let mut ric = max_wrapped + enc - 1;
        if ric > max_value {
            if ric <= full_range {
                return Err(dfail("required insert count wraps below zero"));
            }
            ric -= full_range;
        }
        if ric == 0 {
            return Err(dfail("required insert count zero when encoded non-zero"));
        }
        Ok(ric)
    }

    /// One field line representation (§4.5.2–§4.5.6).
    fn field_line(&self, c: &mut Cursor, ric: u64, base: u64) -> Result<Field, H3Error> {
        let max = self.max_section;
        let b = c.peek().map_err(|_| dfail("truncated"))?;
        let prim = |e: PrimError| dfail(&format!("field line: {e:?}"));
        let (name, value) = if b & 0x80 != 0 {
            let idx = c.int(6).map_err(prim)?;
            if b & 0x40 != 0 {
                let (n, v) = static_table::get(idx).ok_or_else(|| dfail("bad static index"))?;
                (n.as_bytes().to_vec(), v.as_bytes().to_vec())
            } else {
                let abs = base
                    .checked_sub(idx + 1)
                    .ok_or_else(|| dfail("bad index"))?;
                let e = self.dynamic(abs, ric)?;
                (e.name.clone(), e.value.clone())
            }
        } else if b & 0x40 != 0 {
            let idx = c.int(4).map_err(prim)?;
            let name = if b & 0x10 != 0 {
                let (n, _) = static_table::get(idx).ok_or_else(|| dfail("bad static index"))?;
                n.as_bytes().to_vec()
            } else {
                let abs = base
                    .checked_sub(idx + 1)
                    .ok_or_else(|| dfail("bad index"))?;
                self.dynamic(abs, ric)?.name.clone()
            };
            (name, c.string(7, max).map_err(prim)?)
        } else if b & 0x20 != 0 {
            let name = c.string(3, max).map_err(prim)?;
            (name, c.string(7, max).map_err(prim)?)
        } else if b & 0x10 != 0 {
            let idx = c.int(4).map_err(prim)?;
            let abs = base.checked_add(idx).ok_or_else(|| dfail("bad index"))?;
            let e = self.dynamic(abs, ric)?;
            (e.name.clone(), e.value.clone())
        } else {
            let idx = c.int(3).map_err(prim)?;
            let abs = base.checked_add(idx).ok_or_else(|| dfail("bad index"))?;
            let name = self.dynamic(abs, ric)?.name.clone();
            (name, c.string(7, max).map_err(prim)?)
        };
        Ok(Field { name, value })
    }

    /// A dynamic entry a section may reference: below its Required Insert Count and
    /// still in the table.
    fn dynamic(&self, abs: u64, ric: u64) -> Result<&Entry, H3Error> {
        if abs >= ric {
            return Err(dfail("reference at or past the required insert count"));
        }
        self.table
            .get(abs)
            .ok_or_else(|| dfail("reference to an evicted entry"))
    }

    /// The stream was reset or abandoned before its section was decoded (§4.4.2).
    pub fn cancel_stream(&mut self, stream: u64) {
        self.blocked.remove(&stream);
        if self.max_capacity > 0 {
            encode_int(&mut self.out, 0x40, 6, stream);
        }
    }

    /// Decoder-stream bytes to send, ending with an Insert Count Increment for inserts
    /// not yet acknowledged otherwise (§4.4.3).
    pub fn take_instructions(&mut self) -> Vec<u8> {
        let inserted = self.table.inserted();
        if inserted > self.acked {
            encode_int(&mut self.out, 0x00, 6, inserted - self.acked);
            self.acked = inserted;
        }
        std::mem::take(&mut self.out)
    }
}

/// Size a field costs in a table, for callers comparing against a capacity.
pub fn field_cost(f: &Field) -> usize {
    entry_size(&f.name, &f.value)
}
