//! Impairments of one link direction: random and scripted loss, blackholes, jitter (with
//! or without reordering), duplication, corruption and ECN re-marking. Each link
//! direction owns its own seeded generator, so adding a flow or a link never changes
//! another link's losses.
//!
//! Determinism: the direction's generator is forked into five streams (loss, jitter,
//! duplication, corruption, corrupted bytes) and every datagram offered consumes a fixed
//! number of values from the first four (two, one, one, one), whether or not they are
//! used (a dropped datagram still draws its jitter and duplication values, a link
//! without jitter still draws jitter); only a corrupted datagram draws from the fifth.
//! So changing one probability, or the loss model mid-run, never shifts the other
//! streams or the fates of later datagrams under the unchanged impairments. Scripted
//! drops and blackholes use no randomness; they take precedence over random loss, which
//! is still drawn. A direction with nothing configured defers its draws (they could
//! not change any fate) and makes them when a scheduled loss change ends that, so the
//! streams stand exactly where drawing every time would have left them.

mod blackhole;
mod corrupt;
mod loss;
mod scripted;
#[cfg(test)]
mod tests;

use quiclab_proto::{DetRng, Ecn, Instant};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use blackhole::Blackhole;
pub use corrupt::{Corrupt, MAX_CORRUPT_BYTES};
pub(crate) use loss::gilbert_elliott_step;
use loss::LossState;
use scripted::{FlightCounter, ScriptedState};

/// Random loss (applied to every datagram offered to the link).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    #[default]
    None,
    /// Each datagram is lost with probability `p`.
    Bernoulli { p: f64 },
    /// Exactly one datagram is dropped after every round(1/p) - 1 delivered ones
    /// (INET's lossy-link case: one drop per 1/p datagrams), deterministic: with
    /// n = round(1/p), datagrams n, 2n, 3n... counted from when the model was installed
    /// are dropped, so k·n datagrams see exactly k drops. `p` must be in (0, 1].
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Jitter {
    /// Uniform extra delay in `[0, max_ms)`, with nanosecond resolution.
    pub max_ms: f64,
    /// Whether a datagram may overtake earlier ones (true) or the link stays FIFO.
    pub reorder: bool,
}

/// A middlebox that rewrites the ECN codepoint of every datagram it passes, to test a
/// sender's ECN validation (RFC 9000 §13.4.2, Appendix A.4). No randomness is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnImpairment {
    /// Clears the ECN bits: every datagram arrives not-ECT.
    Bleach,
    /// Rewrites ECT(0) as ECT(1) (the receiver's counts then mis-report what was sent).
    RemarkEct1,
    /// Marks every ECN-capable datagram CE (not-ECT ones stay not-ECT, as a router's).
    MarkAllCe,
}

impl EcnImpairment {
    /// The codepoint a datagram sent with `ecn` leaves with.
    pub fn apply(self, ecn: Ecn) -> Ecn {
        match (self, ecn) {
            (EcnImpairment::Bleach, _) => Ecn::NotEct,
            (EcnImpairment::RemarkEct1, Ecn::Ect0) => Ecn::Ect1,
            (EcnImpairment::MarkAllCe, e) if e.is_ect() => Ecn::Ce,
            (_, e) => e,
        }
    }
}

/// Every impairment of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ImpairmentConfig {
    pub loss: LossModel,
    pub drops: Vec<ScriptedDrop>,
    pub jitter: Option<Jitter>,
    /// Probability a datagram is delivered twice.
    pub duplicate: f64,
    /// ECN re-marking of every datagram (absent: codepoints pass unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnImpairment>,
    /// Bit flips in random bytes of passing datagrams (`impair/corrupt.rs`; absent:
    /// none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupt: Option<Corrupt>,
    /// Times during which every datagram is dropped (`impair/blackhole.rs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blackhole: Vec<Blackhole>,
}

/// Why a datagram was dropped by an impairment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    RandomLoss,
    Scripted,
    Blackhole,
}

/// What happens to a datagram offered to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Drop(DropCause),
    /// Deliver after the link's own delay plus `extra_delay`; `reorder`: the extra
    /// delay may let it overtake earlier datagrams; `duplicate`: deliver a second copy;
    /// `corrupt`: flip bits in it first ([`Impairments::corrupt`]).
    Pass {
        extra_delay: Duration,
        reorder: bool,
        duplicate: bool,
        corrupt: bool,
    },
}

impl LossModel {
    /// Checks the probabilities (in [0, 1]; the periodic model's `p` in (0, 1]); the
    /// error names the field (`loss.p`, ...). Use it on scheduled loss changes when the
    /// scenario is loaded, before they reach [`Impairments::set_loss`].
    pub fn validate(&self) -> Result<(), String> {
        loss::validate(self)
    }
}

impl ImpairmentConfig {
    /// Checks every field; the error names the first offending one.
    pub fn validate(&self) -> Result<(), String> {
        self.loss.validate()?;
        scripted::validate(&self.drops)?;
        if let Some(j) = &self.jitter {
            if !(j.max_ms.is_finite() && j.max_ms >= 0.0) {
                return Err("jitter.max_ms must be finite and >= 0".to_string());
            }
        }
        loss::check_prob("duplicate", self.duplicate)?;
        if let Some(c) = &self.corrupt {
            corrupt::validate(c)?;
        }
        blackhole::validate(&self.blackhole)
    }
}

/// Counters of one link direction's impairments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImpairStats {
    /// Datagrams offered.
    pub datagrams: u64,
    pub random_drops: u64,
    pub scripted_drops: u64,
    /// Datagrams passed with a second copy.
    pub duplicates: u64,
    /// Datagrams dropped in a blackhole.
    pub blackhole_drops: u64,
    /// Datagrams passed corrupted.
    pub corrupted: u64,
    /// The current flight number (1-based).
    pub flight: u32,
}

/// The running state of one link direction's impairments.
#[derive(Debug)]
pub struct Impairments {
    loss: LossState,
    scripted: ScriptedState,
    flights: FlightCounter,
    /// Exclusive upper bound of the extra delay, in ns (0: no jitter).
    jitter_max_ns: u64,
    reorder: bool,
    duplicate: f64,
    ecn: Option<EcnImpairment>,
    corrupt: Option<Corrupt>,
    blackholes: blackhole::Windows,
    loss_rng: DetRng,
    jitter_rng: DetRng,
    dup_rng: DetRng,
    corrupt_rng: DetRng,
    corrupt_bytes_rng: DetRng,
    /// Nothing is configured that any draw could affect (see [`Self::compute_inert`]):
    /// [`Self::on_datagram`] then skips the draws and counts them in `deferred`.
    inert: bool,
    /// Datagrams whose draws were skipped while `inert`; drawn by
    /// [`Self::draw_deferred`] before the streams are read again.
    deferred: u64,
    stats: ImpairStats,
}

impl Impairments {
    /// Validates the config (probabilities in [0, 1], non-negative delays); the error
    /// names the offending field.
    pub fn new(config: &ImpairmentConfig, rng: DetRng) -> Result<Self, String> {
        config.validate()?;
        let mut rng = rng;
        // Fork order is fixed: it is part of what a seed means.
        let loss_rng = rng.fork("loss");
        let jitter_rng = rng.fork("jitter");
        let dup_rng = rng.fork("duplicate");
        let corrupt_rng = rng.fork("corrupt");
        let corrupt_bytes_rng = rng.fork("corrupt_bytes");
        let (jitter_max_ns, reorder) = match &config.jitter {
            // Validated finite and >= 0; `as` saturates absurdly large values.
            Some(j) => ((j.max_ms * 1e6).round() as u64, j.reorder),
            None => (0, false),
        };
        let mut imp = Impairments {
            loss: LossState::new(config.loss.clone()),
            scripted: ScriptedState::new(config.drops.clone()),
            flights: FlightCounter::new(),
            jitter_max_ns,
            reorder,
            duplicate: config.duplicate,
            ecn: config.ecn,
            corrupt: config.corrupt.clone(),
            blackholes: blackhole::Windows::new(&config.blackhole),
            loss_rng,
            jitter_rng,
            dup_rng,
            corrupt_rng,
            corrupt_bytes_rng,
            inert: false,
            deferred: 0,
            stats: ImpairStats {
                flight: 1,
                ..ImpairStats::default()
            },
        };
        imp.inert = imp.compute_inert();
        Ok(imp)
    }

    /// Whether no configured impairment can read a draw or drop a datagram: no loss
    /// model, no scripted drops, no blackholes, no jitter, no duplication (a draw in
    /// [0, 1) is never below 0) and no corruption. Then every datagram passes with no
    /// extra delay whatever the draws are, so they can be deferred.
    fn compute_inert(&self) -> bool {
        self.loss.is_none()
            && self.scripted.is_empty()
            && self.blackholes.is_empty()
            && self.jitter_max_ns == 0
            && self.duplicate <= 0.0
            && self.corrupt.is_none()
    }

    /// Makes the draws skipped while inert (the fixed pattern per datagram, in stream
    /// order), so every stream stands where the general path would have left it.
    fn draw_deferred(&mut self) {
        for _ in 0..std::mem::take(&mut self.deferred) {
            self.loss_rng.next_f64();
            self.loss_rng.next_f64();
            self.jitter_rng.next_f64();
            self.dup_rng.next_f64();
            self.corrupt_rng.next_f64();
        }
    }

    /// Decides the fate of the next datagram offered at `now`.
    pub fn on_datagram(&mut self, now: Instant, datagram: &[u8]) -> Fate {
        let pos = self.flights.next();
        if self.inert {
            // Fast path, exactly the general path's result when inert: no scripted or
            // blackhole drop, no random loss (`LossModel::None`), no duplicate, no
            // corruption, zero jitter. Only the draws are deferred; the streams are
            // separate generators nothing else reads, and `set_loss` (the only way out
            // of inertness) draws them first. The loss state's own counter only serves
            // the periodic model, which `set_loss` installs fresh.
            self.deferred += 1;
            self.stats.datagrams = pos.index;
            self.stats.flight = pos.flight;
            return Fate::Pass {
                extra_delay: Duration::ZERO,
                reorder: self.reorder,
                duplicate: false,
                corrupt: false,
            };
        }
        // Fixed draw pattern (see the module docs): loss 2, jitter 1, duplication 1,
        // corruption 1.
        let random_loss = self.loss.next_lost(&mut self.loss_rng);
        let jitter_u = self.jitter_rng.next_f64();
        let dup_u = self.dup_rng.next_f64();
        let corrupt_u = self.corrupt_rng.next_f64();
        let scripted = self.scripted.should_drop(pos, datagram);
        self.stats.datagrams = pos.index;
        self.stats.flight = pos.flight;
        if scripted {
            self.stats.scripted_drops += 1;
            return Fate::Drop(DropCause::Scripted);
        }
        if self.blackholes.covers(now) {
            self.stats.blackhole_drops += 1;
            return Fate::Drop(DropCause::Blackhole);
        }
        if random_loss {
            self.stats.random_drops += 1;
            return Fate::Drop(DropCause::RandomLoss);
        }
        let duplicate = dup_u < self.duplicate;
        if duplicate {
            self.stats.duplicates += 1;
        }
        let corrupt = self
            .corrupt
            .as_ref()
            .is_some_and(|c| corrupt::decide(c, corrupt_u, datagram));
        Fate::Pass {
            extra_delay: Duration::from_nanos(self.jitter_ns(jitter_u)),
            reorder: self.reorder,
            duplicate,
            corrupt,
        }
    }

    /// Flips bits in `payload`, a datagram [`Self::on_datagram`] passed with `corrupt`
    /// (`impair/corrupt.rs`); counted in [`ImpairStats::corrupted`].
    pub fn corrupt(&mut self, payload: &mut [u8]) {
        let Some(c) = &self.corrupt else { return };
        corrupt::apply(c, payload, &mut self.corrupt_bytes_rng);
        self.stats.corrupted += 1;
    }

    /// Uniform in `[0, jitter_max_ns)` from `u` in `[0, 1)`.
    fn jitter_ns(&self, u: f64) -> u64 {
        if self.jitter_max_ns == 0 {
            return 0;
        }
        // The product can round up to the bound for huge bounds: keep it exclusive.
        ((u * self.jitter_max_ns as f64) as u64).min(self.jitter_max_ns - 1)
    }

    /// The codepoint a passing datagram sent with `ecn` leaves with (the `ecn`
    /// impairment, if any).
    pub fn remark(&self, ecn: Ecn) -> Ecn {
        self.ecn.map_or(ecn, |i| i.apply(ecn))
    }

    /// The opposite direction delivered a datagram: the next one here starts a new flight.
    pub fn on_reverse_delivery(&mut self) {
        self.flights.on_reverse_delivery();
    }

    /// Replaces the random loss model (a scheduled change), keeping the counters
    /// (datagram index, flights, scripted drop budgets, statistics) and the generator
    /// streams. The new model starts fresh: the periodic model counts from here, and
    /// Gilbert-Elliott starts in the good state. Validate scheduled models with
    /// [`LossModel::validate`] when loading the scenario: an invalid one does not panic
    /// here, but its behaviour is unspecified.
    pub fn set_loss(&mut self, loss: LossModel) {
        self.draw_deferred();
        self.loss = LossState::new(loss);
        self.inert = self.compute_inert();
    }

    /// Counters so far.
    pub fn stats(&self) -> ImpairStats {
        ImpairStats {
            datagrams: self.flights.datagrams(),
            ..self.stats
        }
    }

    /// How many times each scripted drop rule has fired, in config order.
    pub fn scripted_fired(&self) -> &[u64] {
        self.scripted.fired()
    }
}
