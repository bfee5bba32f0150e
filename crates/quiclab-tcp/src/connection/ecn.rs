//! ECN on one connection: the handshake's negotiation (RFC 3168 §6.1.1, RFC 9768
//! §3.1), the flags and codepoint of each segment sent, the receiver's feedback (ECE
//! latched until CWR, RFC 3168 §6.1.3; or AccECN's ACE field and option, RFC 9768
//! §3.2) and the sender's reading of it, which reaches the congestion controller as
//! `AckSummary::ce_event` and `newly_ce_marked`.
//!
//! Data segments go out with the configured ECT codepoint; pure ACKs, SYNs, FIN-only
//! segments and, under classic ECN, retransmissions go out not-ECT (RFC 3168 §6.1.4,
//! §6.1.5). Under AccECN retransmissions keep ECT (RFC 8311 §4.3 lifts the ban for
//! experiments; TCP Prague, draft-briscoe-iccrg-prague-congestion-control §2.2, sets
//! it), so an L4S flow's repairs stay in the L4S queue.
#![deny(clippy::arithmetic_side_effects)]

use super::TcpConnection;
use crate::accecn::{AccEcnReceiver, AccEcnSender};
use crate::ecn::{self, Feedback};
use crate::wire::{flags, Header, MAX_HEADER_LEN};
use quiclab_proto::{Ecn, Instant};

/// The connection's ECN state.
#[derive(Debug, Default)]
pub(super) struct EcnConn {
    pub feedback: Feedback,
    /// The server's SYN-ACK bits (RFC 9768 Table 2, or ECE alone for classic ECN).
    syn_ack_bits: u8,
    /// The client owes the handshake encoding of the SYN-ACK's codepoint on its first
    /// pure ACK (RFC 9768 §3.2.2.1 Table 3).
    handshake_ack: Option<Ecn>,
    /// RFC 9768 §3.2.2.1 Table 4 note 1: the handshake ACK's ACE was 0, so this side
    /// neither sends ECT nor reacts to feedback.
    sender_disabled: bool,
    rx: AccEcnReceiver,
    tx: AccEcnSender,
    /// Classic receiver: a CE mark arrived and no CWR since (RFC 3168 §6.1.3).
    ece_latched: bool,
    /// Classic sender: CWR is owed on the next new data segment (RFC 3168 §6.1.2).
    cwr_owed: bool,
    /// Classic sender: the send time of the newest data the last reduction covered;
    /// ECE on ACKs of data sent up to then is the same congestion event.
    reduced_through: Option<Instant>,
}

/// What one ACK's ECN feedback says, for the controller.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CeFeedback {
    pub event: Option<Instant>,
    pub newly_marked: u64,
}

impl TcpConnection {
    /// The client's SYN flags (RFC 9768 §3.1.4.1: the first retransmission still
    /// asks; later ones fall back to no ECN, as RFC 3168 §6.1.1.1 allows).
    pub(super) fn ecn_syn_bits(&self) -> u8 {
        if self.syn_count >= 2 {
            0
        } else {
            ecn::syn_bits(self.config.ecn)
        }
    }

    /// A server takes the SYN's request, arriving with codepoint `ecn`. A repeated SYN
    /// keeps the mode; under AccECN the SYN-ACK feeds back the latest SYN's codepoint
    /// (RFC 9768 §3.1.5).
    pub(super) fn ecn_on_syn(&mut self, h: &Header, ecn: Ecn) {
        let (mode, bits) = ecn::server_choice(self.config.ecn, ecn::ecn_bits(h), ecn);
        if self.state == super::State::Listen {
            self.ecn.feedback = mode;
            self.ecn.syn_ack_bits = bits;
        } else if self.ecn.feedback == Feedback::AccEcn {
            self.ecn.syn_ack_bits = ecn::handshake_bits(ecn);
        }
    }

    pub(super) fn ecn_syn_ack_bits(&self) -> u8 {
        self.ecn.syn_ack_bits
    }

    /// The client reads the SYN-ACK that arrived with codepoint `ecn`.
    pub(super) fn ecn_on_syn_ack(&mut self, h: &Header, ecn: Ecn) {
        self.ecn.feedback = ecn::client_choice(self.config.ecn, ecn::ecn_bits(h));
        if self.ecn.feedback == Feedback::AccEcn {
            self.ecn.handshake_ack = Some(ecn);
            if ecn == Ecn::Ce {
                self.ecn.rx.on_syn_ack_ce();
            }
        }
    }

    /// The receiver's share of a synchronized segment (not RST, not SYN) that arrived
    /// with `ecn`: counts it, latches ECE, asks for an immediate ACK when the RFCs do.
    /// Returns whether the segment is the server's handshake ACK whose ACE field is
    /// Table 4's encoding rather than the counter.
    pub(super) fn ecn_on_segment(&mut self, h: &Header, ecn: Ecn, payload: usize) -> bool {
        if ecn == Ecn::Ce {
            self.stats.ecn_ce_received = self.stats.ecn_ce_received.saturating_add(1);
        }
        match self.ecn.feedback {
            Feedback::NotEcn => false,
            Feedback::Classic => {
                if h.has(flags::CWR) {
                    self.ecn.ece_latched = false;
                }
                if ecn == Ecn::Ce {
                    // Linux ACKs the first mark at once: the sender may have a tiny
                    // window.
                    if !self.ecn.ece_latched {
                        self.rx.request_ack();
                    }
                    self.ecn.ece_latched = true;
                }
                false
            }
            Feedback::AccEcn => {
                if self.ecn.rx.on_packet(ecn, payload as u64) {
                    self.rx.request_ack();
                }
                let handshake = self.state == super::State::SynReceived
                    && payload == 0
                    && h.options.sack.is_empty();
                if handshake {
                    match ecn::server_cep_from_handshake_ace(ecn::ecn_bits(h)) {
                        Some(cep) => self.ecn.tx.set_cep(cep),
                        None => self.ecn.sender_disabled = true,
                    }
                }
                handshake
            }
        }
    }

    /// The sender's reading of an ACK at `now`; `newest_sent` is the send time of
    /// the newest segment it newly acknowledged, `acked` how many it newly
    /// acknowledged. `handshake`: the ACE field was the handshake encoding.
    pub(super) fn ecn_on_ack(
        &mut self,
        now: Instant,
        h: &Header,
        newest_sent: Option<Instant>,
        acked: u64,
        handshake: bool,
    ) -> CeFeedback {
        let newly = match self.ecn.feedback {
            Feedback::NotEcn => 0,
            // RFC 3168 §6.1.2: ECE reports congestion; one per ACK for the counter.
            Feedback::Classic => u64::from(h.has(flags::ECE)),
            Feedback::AccEcn if handshake => 0,
            Feedback::AccEcn => {
                let ace = ecn::ecn_bits(h);
                let opt = h.options.accecn.as_ref();
                self.ecn.tx.on_ack(ace, opt, acked, self.smss)
            }
        };
        if newly == 0 || self.ecn.sender_disabled {
            return CeFeedback::default();
        }
        self.stats.ecn_ce_reported = self.stats.ecn_ce_reported.saturating_add(newly);
        if self.ecn.feedback == Feedback::Classic
            && newest_sent.is_some_and(|t| self.ecn.reduced_through.is_none_or(|r| t > r))
        {
            // A new window's congestion: the controller reduces (once per its recovery
            // period, the same rule) and the next new data carries CWR.
            self.ecn.cwr_owed = true;
            self.ecn.reduced_through = Some(now);
        }
        CeFeedback {
            event: newest_sent,
            newly_marked: newly,
        }
    }

    /// Whether the next new data segment carries CWR (taken once).
    pub(super) fn ecn_take_cwr(&mut self) -> bool {
        std::mem::take(&mut self.ecn.cwr_owed)
    }

    /// Sets a non-SYN segment's ECN flags (and the AccECN option on a segment without
    /// data, whose MSS-sized budget it does not take from, as many
    /// fields as the option space leaves room for). CWR, if the caller set it, stays
    /// under classic ECN.
    pub(super) fn ecn_header(&mut self, h: &mut Header, no_data: bool) {
        if !h.has(flags::ACK) {
            return;
        }
        match self.ecn.feedback {
            Feedback::NotEcn => {}
            Feedback::Classic => {
                if self.ecn.ece_latched {
                    h.flags |= flags::ECE;
                }
            }
            Feedback::AccEcn => {
                let handshake = no_data && h.options.sack.is_empty() && !h.has(flags::FIN);
                let bits = match self.ecn.handshake_ack.take() {
                    Some(ecn) if handshake => ecn::handshake_bits(ecn),
                    _ => self.ecn.rx.ace(),
                };
                ecn::set_ecn_bits(h, bits);
                if no_data {
                    self.fit_accecn_option(h);
                }
            }
        }
    }

    /// RFC 9768 §3.2.3: the option with the most fields that fit (Table 5).
    fn fit_accecn_option(&self, h: &mut Header) {
        for count in (0..=3).rev() {
            h.options.accecn = Some(self.ecn.rx.option(count));
            if h.options.wire_len() <= MAX_HEADER_LEN - crate::wire::HEADER_LEN {
                return;
            }
        }
        h.options.accecn = None;
    }

    /// An ACK went out (for the increment-triggered ACK rule).
    pub(super) fn ecn_on_ack_sent(&mut self) {
        self.ecn.rx.on_ack_sent();
    }

    /// The codepoint of a data segment of `len` bytes.
    pub(super) fn ecn_codepoint(&self, len: u64, retransmission: bool) -> Ecn {
        let ect = match self.ecn.feedback {
            Feedback::NotEcn => false,
            Feedback::Classic => !retransmission,
            Feedback::AccEcn => true,
        };
        if ect && len > 0 && !self.ecn.sender_disabled {
            self.config.ecn_codepoint.ecn()
        } else {
            Ecn::NotEct
        }
    }

    /// The feedback mode the handshake settled on.
    pub fn ecn_feedback(&self) -> Feedback {
        self.ecn.feedback
    }

    /// Bytes the peer reported received per codepoint through the AccECN option:
    /// (ECT(0), ECT(1), CE).
    pub fn accecn_bytes_reported(&self) -> (u64, u64, u64) {
        self.ecn.tx.bytes()
    }
}
