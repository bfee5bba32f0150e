//! qlog fields of frame bodies that both RFC 9000's frames and the multipath frames
//! carry (ACK in PATH_ACK, NEW_CONNECTION_ID in PATH_NEW_CONNECTION_ID).

use super::json::Json;
use crate::wire::{ConnectionId, EcnCounts};

/// ACK: the delay in ms (the raw field scaled by the sender's exponent), the ranges
/// lowest first, and the ECN counts.
pub(super) fn write_ack(
    j: &mut Json<'_>,
    ack_delay: u64,
    ranges: &[(u64, u64)],
    ecn: Option<&EcnCounts>,
    ack_delay_exponent: u64,
) {
    let us = ack_delay.checked_shl(ack_delay_exponent.min(63) as u32);
    j.key("ack_delay").ms_from_us(us.unwrap_or(u64::MAX));
    j.key("acked_ranges").begin_arr();
    // Lowest first reads naturally; the draft allows any order.
    for &(lo, hi) in ranges.iter().rev() {
        j.begin_arr().u64(lo);
        if hi != lo {
            j.u64(hi);
        }
        j.end_arr();
    }
    j.end_arr();
    if let Some(e) = ecn {
        j.key("ect1").u64(e.ect1);
        j.key("ect0").u64(e.ect0);
        j.key("ce").u64(e.ce);
    }
}

pub(super) fn write_new_connection_id(
    j: &mut Json<'_>,
    sequence: u64,
    retire_prior_to: u64,
    id: &ConnectionId,
    reset_token: &[u8; 16],
) {
    j.key("sequence_number").u64(sequence);
    j.key("retire_prior_to").u64(retire_prior_to);
    j.key("connection_id_length").u64(id.len() as u64);
    j.key("connection_id").hex(id.as_bytes());
    j.key("stateless_reset_token").hex(reset_token);
}
