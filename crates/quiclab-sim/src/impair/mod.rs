//! Impairments of one link direction: random and scripted loss, jitter (with or
//! without reordering) and duplication. Each link direction owns its own seeded
//! generator, so adding a flow or a link never changes another link's losses.

use quiclab_proto::rng::DetRng;
use quiclab_proto::time::Instant;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Random loss (applied to every datagram offered to the link).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    #[default]
    None,
    /// Each datagram is lost with probability `p`.
    Bernoulli { p: f64 },
    /// Exactly one datagram is dropped after every round(1/p) - 1 delivered ones
    /// (INET's lossy-link case: one drop per 1/p datagrams), deterministic.
    Periodic { p: f64 },
    /// Gilbert-Elliott two-state bursts: per datagram, move good->bad with
    /// `p_good_bad`, bad->good with `p_bad_good`; lose with `loss_good` / `loss_bad`.
    GilbertElliott {
        p_good_bad: f64,
        p_bad_good: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

/// QUIC packet types a scripted drop can match (long header types are visible
/// without decryption; any short header packet counts as `one_rtt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacketTypeName {
    Initial,
    ZeroRtt,
    Handshake,
    OneRtt,
}

/// A deterministic drop rule. Datagram and flight numbers are 1-based and count
/// datagrams offered to this link direction. A flight is a run of datagrams this
/// direction carries between two datagrams of the opposite direction being delivered
/// (so "the client's second flight" is the client's datagrams after it first heard
/// from the server).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedDrop {
    /// Drop these datagrams (by index in this direction).
    pub datagrams: Vec<u64>,
    /// Drop datagrams of this flight...
    pub flight: Option<u32>,
    /// ...from this datagram of the flight on (1 = all of it; 2 = "the rest of the
    /// flight"), up to `to_datagram` if set.
    pub from_datagram: Option<u32>,
    pub to_datagram: Option<u32>,
    /// Only datagrams containing a packet of this type (combines with the above; alone,
    /// drops every such datagram).
    pub packet_type: Option<PacketTypeName>,
    /// Apply at most this many times (default: unlimited).
    pub max_drops: Option<u64>,
}

/// Extra delay per datagram.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Jitter {
    /// Uniform extra delay in `[0, max_ms)`.
    pub max_ms: f64,
    /// Whether a datagram may overtake earlier ones (true) or the link stays FIFO.
    pub reorder: bool,
}

/// Every impairment of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImpairmentConfig {
    pub loss: LossModel,
    pub drops: Vec<ScriptedDrop>,
    pub jitter: Option<Jitter>,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
}

/// Why a datagram was dropped by an impairment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    RandomLoss,
    Scripted,
}

/// What happens to a datagram offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Drop(DropCause),
    /// Deliver after the link's own delay plus `extra_delay`; `reorder`: the extra
    /// delay may let it overtake earlier datagrams; `duplicate`: deliver a second copy.
    Pass {
        extra_delay: Duration,
        reorder: bool,
        duplicate: bool,
    },
}

/// The running state of one link direction's impairments.
#[derive(Debug)]
pub struct Impairments {
    _p: (),
}

impl Impairments {
    /// Validates the config (probabilities in [0, 1], non-negative delays); the error
    /// names the offending field.
    pub fn new(config: &ImpairmentConfig, rng: DetRng) -> Result<Self, String> {
        let _ = (config, rng);
        todo!("S-A")
    }

    /// Decides the fate of the next datagram offered at `now`.
    pub fn on_datagram(&mut self, now: Instant, datagram: &[u8]) -> Fate {
        let _ = (now, datagram);
        todo!("S-A")
    }

    /// The opposite direction delivered a datagram: the next one here starts a new flight.
    pub fn on_reverse_delivery(&mut self) {
        todo!("S-A")
    }

    /// Replaces the random loss model (a scheduled change), keeping the counters.
    pub fn set_loss(&mut self, loss: LossModel) {
        let _ = loss;
        todo!("S-A")
    }
}
