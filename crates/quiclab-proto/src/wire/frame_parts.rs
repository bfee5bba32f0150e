//! Frame bodies shared by RFC 9000's frames and the multipath extension's (PATH_ACK
//! carries an ACK, PATH_NEW_CONNECTION_ID a NEW_CONNECTION_ID), kept apart so both
//! frame enums can use them without depending on each other.

use super::ids::ConnectionId;
use std::ops::RangeInclusive;

/// ECN counts of an ACK_ECN frame (RFC 9000 §19.3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

/// An ACK frame (RFC 9000 §19.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// The encoded ACK Delay field (to be scaled by 2^ack_delay_exponent microseconds).
    pub ack_delay: u64,
    /// Acknowledged packet numbers, highest range first, disjoint and non-adjacent.
    /// Never empty; `ranges[0].end()` is the Largest Acknowledged.
    pub ranges: Vec<RangeInclusive<u64>>,
    pub ecn: Option<EcnCounts>,
}

impl AckFrame {
    pub fn largest(&self) -> u64 {
        *self.ranges[0].end()
    }
}

/// A NEW_CONNECTION_ID frame (RFC 9000 §19.15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewConnectionIdFrame {
    pub sequence: u64,
    pub retire_prior_to: u64,
    pub id: ConnectionId,
    pub reset_token: [u8; 16],
}
