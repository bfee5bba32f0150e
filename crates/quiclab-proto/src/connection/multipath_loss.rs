//! Loss detection, probe timeouts and pacing of the paths above 0
//! (draft-ietf-quic-multipath §5.3 "separate congestion control state is maintained for
//! each path", §5.7 "follow the mechanism specified in QUIC-RECOVERY for detecting
//! packet loss on each individual path"). Each path's own `Recovery` sets its loss
//! detection timer (RFC 9002 A.8 with the path's RTT and PTO backoff), which fires
//! there (A.9): time-threshold losses re-queue what the packets carried, or the PTO
//! asks for one or two ack-eliciting probes on that path (§6.2.4) and backs off that
//! path's PTO only. Path 0 keeps the connection's timers (`loss.rs`) and statistics:
//! nothing here touches its recovery, its PTO count or `pto_count_total`.
//!
//! The paths keep their deadlines (`PathSpace::loss_timer`, `pacing_at`); the timer
//! table holds the earliest of each ([`Timer::PathLoss`], [`Timer::PathPacing`]).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::path_spaces::{PathLossStats, VALIDATION_PTOS};
use super::spaces::{oldest_stream_data, SentRecord, SpaceId};
use super::stats::tally;
use super::timers::Timer;
use super::Connection;
use crate::path_recovery::{LossOutcome, LossTimer, PtoContext, TimeoutOutcome};
use crate::time::Instant;
use crate::wire::frame_mp::abandon_code;
use crate::wire::PathId;

impl Connection {
    /// Path `path_id`'s loss recovery so far (above 0; once freed, its last counts
    /// while remembered, `freed_paths.rs`).
    pub fn multipath_path_loss(&self, path_id: u32) -> Option<PathLossStats> {
        let Some(sp) = self.path_spaces.get(PathId(path_id)) else {
            let freed = self.path_spaces.freed.get(PathId(path_id))?;
            return Some(freed.loss);
        };
        Some(PathLossStats {
            pto_count: sp.recovery.pto_count(),
            ..sp.loss
        })
    }

    /// RFC 9002 A.8's context for a path above 0: packets on it are 1-RTT packets of a
    /// confirmed handshake, and a server at the path's anti-amplification limit arms
    /// no PTO (§6.2.2.1). While our PATH_CHALLENGE on the path is unanswered the path
    /// counts as not validated, so its timer stays armed even with nothing in flight
    /// (the anti-deadlock PTO of §6.2.2.1, from the last event on the path): a
    /// challenge whose packet was acknowledged but whose PATH_RESPONSE was lost is
    /// still sent again, and the validation still ends (RFC 9000 §8.2.4).
    pub(super) fn path_pto_context(&self, path: PathId) -> PtoContext {
        let validating = self
            .path_spaces
            .get(path)
            .is_some_and(|sp| sp.challenge.is_some() && !sp.validated && !sp.abandoned);
        let mut ctx = self.pto_context();
        ctx.peer_completed_address_validation = !validating;
        ctx.handshake_keys = false;
        // A validation in progress keeps its timer whatever the budget (RFC 9000
        // §8.2.4): the PTO ends it.
        let (factor, known) = (self.config.amplification_factor, self.validated_remote());
        ctx.amplification_blocked = self.path_spaces.get(path).is_some_and(|sp| {
            sp.challenge.is_none() && sp.amplification_budget(self.side, factor, known) == 0
        });
        ctx
    }

    /// Path 0's peer address once validated (RFC 9000 §8): a path above 0 to it is
    /// not held to the anti-amplification limit.
    pub(super) fn validated_remote(&self) -> Option<std::net::SocketAddr> {
        self.path.validated.then_some(self.path.remote)
    }

    /// RFC 9002 A.8 SetLossDetectionTimer for path `path` (its own recovery).
    pub(super) fn arm_path_loss_timer(&mut self, now: Instant, path: PathId) {
        let ctx = self.path_pto_context(path);
        if let Some(sp) = self.path_spaces.get_mut(path) {
            let timer = if sp.abandoned {
                LossTimer::Off
            } else {
                sp.recovery.loss_detection_timer(now, &ctx)
            };
            sp.loss_timer = timer.deadline();
        }
        self.refresh_path_timers();
    }

    /// The loss detection timer a PATH_ACK's outcome set for `path` (A.7).
    pub(super) fn set_path_loss_timer(&mut self, path: PathId, timer: LossTimer) {
        if let Some(sp) = self.path_spaces.get_mut(path).filter(|s| !s.abandoned) {
            sp.loss_timer = timer.deadline();
        }
        self.refresh_path_timers();
    }

    /// The timer table's [`Timer::PathLoss`] and [`Timer::PathPacing`]: the earliest
    /// of the paths' deadlines.
    pub(super) fn refresh_path_timers(&mut self) {
        let path0_free = self.multipath.path0_free_at;
        let loss = [self.path_spaces.loss_deadline(), path0_free]
            .into_iter()
            .flatten()
            .min();
        let pacing = self.path_spaces.pacing_deadline();
        self.timers.set_or_stop(Timer::PathLoss, loss);
        self.timers.set_or_stop(Timer::PathPacing, pacing);
    }

    /// The paths' expired timers: pacing deadlines end (the next poll sends what
    /// waited), then each path whose loss detection timer is due, once, by path ID.
    pub(super) fn on_path_timers(&mut self, now: Instant) {
        if self.timers.is_expired(Timer::PathPacing, now) {
            for (_, sp) in self.path_spaces.iter_mut() {
                if sp.pacing_at.is_some_and(|t| t <= now) {
                    sp.pacing_at = None;
                }
            }
        }
        if self.timers.is_expired(Timer::PathLoss, now) {
            let mut after: Option<PathId> = None;
            loop {
                let due = self
                    .path_spaces
                    .iter()
                    .filter(|(p, _)| after.is_none_or(|a| *p > a))
                    .find(|(_, s)| s.loss_timer.is_some_and(|t| t <= now))
                    .map(|(p, _)| p);
                let Some(path) = due else { break };
                after = Some(path);
                self.on_path_loss_timeout(now, path);
            }
            // §3.4: abandoned paths whose 3 PTO are over.
            self.free_abandoned_paths(now);
        }
        self.refresh_path_timers();
    }

    /// RFC 9002 A.9 OnLossDetectionTimeout on path `path`, with its own recovery.
    fn on_path_loss_timeout(&mut self, now: Instant, path: PathId) {
        let ctx = self.path_pto_context(path);
        let Some(sp) = self.path_spaces.get_mut(path) else {
            return;
        };
        let outcome = sp
            .recovery
            .on_loss_detection_timeout(now, &ctx, &self.config.loss, None);
        match outcome {
            TimeoutOutcome::Lost { loss, .. } => self.apply_path_losses(now, path, loss, true),
            TimeoutOutcome::Pto { .. } => {
                tally(&mut sp.loss.ptos, 1);
                if sp.challenge.is_some() && !sp.validated {
                    self.on_validation_pto(path);
                } else {
                    self.queue_path_probes(path);
                    // `multipath.abandon_after_ptos` (`multipath_failed.rs`).
                    self.abandon_if_failed(path);
                }
            }
        }
        self.arm_path_loss_timer(now, path);
    }

    /// The PTO of path `path` expired with our PATH_CHALLENGE unanswered: the
    /// challenge goes again as the probe (RFC 9000 §8.2.1: no more often than the
    /// PTO), or, at the [`VALIDATION_PTOS`]th, the validation failed (§8.2.4) and the
    /// path is abandoned (draft-ietf-quic-multipath §3.1: "the endpoint MUST
    /// explicitly close the path"), with PATH_UNSTABLE_OR_POOR.
    fn on_validation_pto(&mut self, path: PathId) {
        let Some(sp) = self.path_spaces.get_mut(path) else {
            return;
        };
        sp.validation_ptos = sp.validation_ptos.saturating_add(1);
        if sp.validation_ptos >= VALIDATION_PTOS {
            self.abandon(path, abandon_code::PATH_UNSTABLE_OR_POOR);
            return;
        }
        sp.challenge_pending = true;
        sp.probes = 1;
    }

    /// Packets of path `path` declared lost (by a PATH_ACK, or by its timer): what
    /// they carried goes again on whichever path sends first (RFC 9000 §13.3;
    /// draft-ietf-quic-multipath §5.6 leaves the path to the sender).
    pub(super) fn apply_path_losses(
        &mut self,
        now: Instant,
        path: PathId,
        loss: LossOutcome<SentRecord>,
        by_timer: bool,
    ) {
        let n = loss.lost.len() as u64;
        for p in &loss.lost {
            tally(&mut self.stats.packets_lost, 1);
            self.log_path_lost(now, path, p.pn, by_timer);
            self.requeue_lost(SpaceId::Data, &p.data);
        }
        tally(&mut self.stats.bytes_lost, loss.lost_bytes);
        if let Some(sp) = self.path_spaces.get_mut(path) {
            // RFC 9000 §13.4.2: a lost testing packet settles on the path's own ECN.
            for p in &loss.lost {
                sp.ecn.on_lost(SpaceId::Data, p.pn, p.data.ecn);
            }
            tally(&mut sp.loss.lost_packets, n);
            if by_timer {
                tally(&mut sp.loss.lost_by_timer, n);
            }
        }
    }

    /// RFC 9002 §6.2.4 on path `path`: two ack-eliciting probes on that path. With no
    /// new data to send they carry the stream data of the path's two oldest packets in
    /// flight ("previously sent data MAY be sent"; draft-ietf-quic-multipath §5.7: the
    /// copy may leave on any path), else a PING. Nothing is declared lost.
    fn queue_path_probes(&mut self, path: PathId) {
        let Some(sp) = self.path_spaces.get_mut(path) else {
            return;
        };
        sp.probes = 2;
        if self.streams.has_pending() {
            return;
        }
        let oldest = oldest_stream_data(sp.recovery.sent(SpaceId::Data));
        for r in &oldest {
            self.streams.on_lost(r);
        }
    }
}
