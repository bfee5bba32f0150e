//! 1-RTT key updates, responder side (RFC 9001 §6): a packet with the other key phase
//! is tried with the next keys; if it authenticates, both directions move to them.

use super::spaces::SpaceId;
use super::Connection;
use crate::crypto::protect::decrypt_payload;
use crate::crypto::{PacketKey, PacketKeySet, Secrets};
use std::ops::Range;

/// Key phase state of the 1-RTT keys.
#[derive(Default)]
pub struct KeyUpdate {
    secrets: Option<Secrets>,
    /// The key phase bit of the current keys.
    pub phase: bool,
    /// Keys of the next phase, derived ahead of time.
    next: Option<PacketKeySet>,
    /// The previous phase's receive key, for packets reordered across the update,
    /// with the first packet number of the current phase.
    previous: Option<(Box<dyn PacketKey>, u64)>,
}

impl KeyUpdate {
    /// Takes the secrets TLS hands over with the 1-RTT keys.
    pub fn install(&mut self, mut secrets: Secrets) {
        self.next = Some(secrets.next_packet_keys());
        self.secrets = Some(secrets);
    }
}

impl Connection {
    /// Decrypts a 1-RTT packet whose key phase bit is `phase` (RFC 9001 §6.3).
    pub(super) fn decrypt_one_rtt(
        &mut self,
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
    ) -> Option<Range<usize>> {
        let ku = &mut self.key_update;
        let keys = self.spaces[SpaceId::Data as usize].keys.as_mut()?;
        if phase == ku.phase {
            return decrypt_payload(&*keys.remote.packet, packet, header_len, pn).ok();
        }
        if let Some((old, first_pn)) = &ku.previous {
            if pn < *first_pn {
                return decrypt_payload(&**old, packet, header_len, pn).ok();
            }
        }
        // Trial decryption with the next keys: on failure the buffer is unusable anyway
        // (the packet is dropped), so no copy is needed.
        let next = ku.next.as_ref()?;
        let range = decrypt_payload(&*next.remote, packet, header_len, pn).ok()?;
        let next = ku.next.take().expect("checked");
        let old_remote = std::mem::replace(&mut keys.remote.packet, next.remote);
        keys.local.packet = next.local;
        ku.previous = Some((old_remote, pn));
        ku.phase = !ku.phase;
        ku.next = ku.secrets.as_mut().map(|s| s.next_packet_keys());
        self.stats.key_updates += 1;
        Some(range)
    }
}
