//! Careful Resume's phases (draft-ietf-tsvwg-careful-resume §4, run by
//! `cc::CarefulResume`), the triggers of their transitions and the record of one
//! transition as qlog reports it (draft-ietf-tsvwg-careful-resume-qlog §3,
//! `QUICCarefulResumePhaseUpdated`).

use crate::time::Instant;
use std::time::Duration;

/// The phases of draft-ietf-tsvwg-careful-resume §4 (Figure 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Reconnaissance,
    Unvalidated,
    Validating,
    SafeRetreat,
    /// Careful Resume no longer used: the controller underneath runs alone.
    Normal,
}

impl Phase {
    /// The qlog name (`CarefulResumePhase`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Reconnaissance => "reconnaissance",
            Phase::Unvalidated => "unvalidated",
            Phase::Validating => "validating",
            Phase::SafeRetreat => "safe_retreat",
            Phase::Normal => "normal",
        }
    }
}

/// Why a phase changed (the qlog draft's trigger table, §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    CongestionWindowLimited,
    RttNotValidated,
    LastUnvalidatedPacketSent,
    FirstUnvalidatedPacketAcknowledged,
    RttExceeded,
    RateLimited,
    LastUnvalidatedPacketAcknowledged,
    PathChanged,
    PacketLoss,
    EcnCe,
    ExitRecovery,
}

impl Trigger {
    /// The qlog name.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::CongestionWindowLimited => "congestion_window_limited",
            Trigger::RttNotValidated => "rtt_not_validated",
            Trigger::LastUnvalidatedPacketSent => "last_unvalidated_packet_sent",
            Trigger::FirstUnvalidatedPacketAcknowledged => "first_unvalidated_packet_acknowledged",
            Trigger::RttExceeded => "rtt_exceeded",
            Trigger::RateLimited => "rate_limited",
            Trigger::LastUnvalidatedPacketAcknowledged => "last_unvalidated_packet_acknowledged",
            Trigger::PathChanged => "path_changed",
            Trigger::PacketLoss => "packet_loss",
            Trigger::EcnCe => "ECN_CE",
            Trigger::ExitRecovery => "exit_recovery",
        }
    }
}

/// One phase transition with the state after it (qlog `CarefulResumeStateParameters`
/// and `CarefulResumeRestoredParameters`). `at` is when it happened: the connection
/// may log it a little later (at the next ACK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseUpdate {
    pub at: Instant,
    pub old: Option<Phase>,
    pub new: Phase,
    pub trigger: Option<Trigger>,
    pub pipesize: u64,
    /// Packet numbers of the first and last packets sent in the Unvalidated Phase
    /// (0 before it).
    pub first_unvalidated_packet: u64,
    pub last_unvalidated_packet: u64,
    pub congestion_window: u64,
    pub ssthresh: Option<u64>,
    pub saved_congestion_window: u64,
    pub saved_rtt: Duration,
}
