//! RFC 9002 A.9 OnLossDetectionTimeout: the timer fired; either time-threshold losses
//! are declared, or the PTO expired and probes are due. The connection applies the
//! returned [`TimeoutOutcome`] (retransmissions, probes, statistics, events) and
//! re-arms the timer.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::loss::{LossOutcome, MtuProbe};
use super::pto::PtoContext;
use super::Recovery;
use crate::config::LossConfig;
use crate::recovery::SpaceId;
use crate::time::Instant;

/// Which probes the expired PTO asks for (RFC 9002 §6.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Anti-deadlock (RFC 9002 §6.2.2.1): one packet in this space (a padded Initial
    /// earns the server credit; a Handshake packet proves the client's address).
    AntiDeadlock(SpaceId),
    /// Probes for the packets in flight in this space.
    Pto(SpaceId),
}

/// What one expiry of the loss detection timer did.
#[derive(Debug)]
pub(crate) enum TimeoutOutcome<T> {
    /// RFC 9002 §6.1.2: time-threshold losses in `space` (the controller was told).
    Lost {
        space: SpaceId,
        loss: LossOutcome<T>,
    },
    /// RFC 9002 §6.2: the PTO expired; `pto_count` is the new backoff count.
    Pto {
        probe: Option<Probe>,
        pto_count: u32,
    },
}

impl<T> Recovery<T> {
    /// RFC 9002 A.9 OnLossDetectionTimeout.
    pub fn on_loss_detection_timeout(
        &mut self,
        now: Instant,
        ctx: &PtoContext,
        config: &LossConfig,
        mtu_probe: Option<MtuProbe>,
    ) -> TimeoutOutcome<T> {
        if let Some((_, space)) = self.loss_time_and_space() {
            let loss = self.detect_lost(now, space, config, mtu_probe, || ctx.max_ack_delay);
            return TimeoutOutcome::Lost { space, loss };
        }
        let probe = if let Some(space) = self.anti_deadlock_space(ctx) {
            Some(Probe::AntiDeadlock(space))
        } else {
            self.pto_time_and_space(now, ctx)
                .map(|(_, space)| Probe::Pto(space))
        };
        self.pto_count = self.pto_count.saturating_add(1);
        TimeoutOutcome::Pto {
            probe,
            pto_count: self.pto_count,
        }
    }
}
