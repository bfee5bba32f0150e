//! Choosing the next segment: the SYN or SYN-ACK, then a retransmission of a lost
//! segment (RFC 6675 §4 NextSeg rule 1), a tail loss probe (RFC 8985 §7.3), new data
//! within the congestion and peer windows, and finally a pure ACK when one is owed.

use super::{new_segment, Outgoing, State, TcpConnection, Transmit};
use crate::wire::{flags, Options};
use quiclab_proto::Instant;

impl TcpConnection {
    /// Writes the next segment into `buf` (cleared first) and says where it goes;
    /// `None` when nothing is to be sent now.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        self.tx_ecn = quiclab_proto::Ecn::NotEct;
        let remote = self.remote?;
        match self.state {
            State::Listen | State::Closed => return None,
            State::SynSent | State::SynReceived if self.syn_pending => {
                self.send_syn(now, buf);
            }
            // RFC 7413 §4.2.2: after accepting SYN data the server may send before
            // the handshake completes.
            State::SynReceived if self.tfo.accepted => {
                if !self.send_data_or_ack(now, buf) {
                    return None;
                }
            }
            State::SynSent | State::SynReceived => return None,
            State::Established => {
                if !self.send_data_or_ack(now, buf) {
                    return None;
                }
            }
        }
        self.stats.segments_sent += 1;
        self.check_closed();
        if self.tx_ecn.is_ect() {
            self.stats.ect_segments_sent += 1;
        }
        Some(Transmit {
            destination: remote,
            size: buf.len(),
            ecn: self.tx_ecn,
        })
    }

    /// A data segment, else a pure ACK if one is owed; false if neither.
    fn send_data_or_ack(&mut self, now: Instant, buf: &mut Vec<u8>) -> bool {
        if !self.send_data(now, buf) {
            if !self.rx.ack_due(now) {
                return false;
            }
            self.emit(now, self.wire_seq(self.sb.nxt), flags::ACK, &[], buf);
            self.stats.pure_acks_sent += 1;
        }
        true
    }

    /// Encodes a segment with the current ACK state into `buf`.
    fn emit(&mut self, now: Instant, seq: u32, fl: u8, payload: &[u8], buf: &mut Vec<u8>) {
        let mut h = self.header(now, seq, fl);
        self.ecn_header(&mut h, payload.is_empty());
        let remote = self.remote.expect("checked by poll_transmit");
        // Options are at most 3 SACK blocks with timestamps / 4 without: they fit.
        if h.encode(payload, self.local, remote, buf).is_err() {
            buf.clear();
        }
        if fl & flags::ACK != 0 {
            self.rx.on_ack_sent();
            self.ecn_on_ack_sent();
        }
    }

    fn send_syn(&mut self, now: Instant, buf: &mut Vec<u8>) {
        let server = self.state == State::SynReceived;
        let mut h = self.header(now, self.iss, flags::SYN);
        h.options = Options {
            mss: Some(self.config.mss),
            // RFC 7323 §2.2: a SYN-ACK carries the option only if the SYN did.
            window_scale: if server {
                self.ws_agreed.then_some(self.rcv_shift)
            } else {
                self.config.window_shift()
            },
            sack_permitted: if server { self.sack } else { self.config.sack },
            timestamps: match (server, self.timestamps, self.config.timestamps) {
                (true, true, _) => Some((super::ts_val(now), self.ts_recent)),
                (false, _, true) => Some((super::ts_val(now), 0)),
                _ => None,
            },
            sack: Vec::new(),
            fast_open: None,
            accecn: None,
        };
        // RFC 3168 §6.1.1 / RFC 9768 §3.1.1: the ECN request or answer.
        let bits = if server {
            self.ecn_syn_ack_bits()
        } else {
            self.ecn_syn_bits()
        };
        crate::ecn::set_ecn_bits(&mut h, bits);
        let payload = if server {
            h.flags |= flags::ACK;
            h.ack = self.syn_ack_number();
            h.options.fast_open = self.tfo.issue.clone();
            if self.tfo.accepted {
                // The SYN-ACK acknowledges the SYN's data (RFC 7413 §4.2.2).
                self.rx.on_ack_sent();
            }
            Vec::new()
        } else {
            self.fast_open_syn(now, &mut h.options)
        };
        let remote = self.remote.expect("checked by poll_transmit");
        if h.encode(&payload, self.local, remote, buf).is_err() {
            buf.clear();
        }
        self.syn_pending = false;
        self.syn_sent = Some(now);
        self.syn_count += 1;
        self.rto_deadline = Some(now + self.rto());
    }

    /// Sends a retransmission, probe or new data segment if one may go; false if not.
    fn send_data(&mut self, now: Instant, buf: &mut Vec<u8>) -> bool {
        let cwnd = self.send_window();
        let rate = self.pacing_rate();
        if let Some(at) = self.pacer.next_send_time(now, self.paced_size(), rate) {
            self.pacing_deadline = Some(at);
            return false;
        }
        let out = if let Some(o) = self.frto_new_segment() {
            Some(o)
        } else if self.frto.as_ref().is_some_and(|f| f.waiting()) {
            None // RFC 5682 §3 step 3: no retransmission before the next ACK's verdict
        } else if let Some(o) = self.next_retransmission(cwnd) {
            self.rto_retransmit = false;
            Some(o)
        } else if self.tlp_pending {
            self.tlp_pending = false;
            self.next_new(u64::MAX).or_else(|| self.probe_last())
        } else {
            let o = self.next_new(cwnd);
            // RFC 9002 §7.8 (the same rule as QUIC): out of data with room in the
            // window means application-limited.
            self.app_limited = self.sb.unsent() == 0 && self.sb.pipe < cwnd;
            if self.app_limited {
                self.delivery.mark_app_limited(self.sb.pipe);
            }
            o
        };
        let Some(o) = out else {
            return false;
        };
        let len = o.end - o.start;
        let mut payload = Vec::with_capacity(len as usize);
        self.sb.copy(o.start, o.end, &mut payload);
        let mut fl = flags::ACK;
        if o.fin {
            fl |= flags::FIN;
        }
        if len > 0 {
            fl |= flags::PSH;
            // RFC 3168 §6.1.2: CWR on the first new data after the reduction.
            if !o.retransmission && self.ecn_take_cwr() {
                fl |= flags::CWR;
            }
        }
        self.tx_ecn = self.ecn_codepoint(len, o.retransmission);
        self.emit(now, self.wire_seq(o.start), fl, &payload, buf);
        self.tx_count += 1;
        let in_flight = self.sb.pipe + len;
        let snap = self.delivery.on_sent(now, len, in_flight);
        if o.retransmission {
            self.sb.on_retransmitted(o.start, now, self.tx_count, snap);
            self.stats.retransmitted_segments += 1;
            self.stats.bytes_retransmitted += len;
        } else {
            self.sb
                .on_sent(o.start, new_segment(&o, now, self.tx_count, snap));
        }
        self.stats.data_segments_sent += 1;
        if len > 0 {
            self.cc.on_packet_sent(now, len, self.sb.pipe);
        }
        if let Some(prr) = &mut self.prr {
            prr.on_sent(len); // RFC 9937 §5: prr_out
        }
        self.pacer
            .on_sent(now, len + super::PACED_HEADER_BYTES, rate);
        // RFC 6298 §5.1; and, as Linux (tcp_xmit_retransmit_queue), when the first
        // unacknowledged segment is sent again: the timer then waits an RTO for that
        // retransmission's ACK, instead of firing one RTO after the last ACK that
        // advanced, which in a recovery on a path whose RTO is about its RTT comes
        // before the retransmission can be acknowledged.
        if self.rto_deadline.is_none() || (o.retransmission && o.start == self.sb.una) {
            self.rearm_rto(now);
        }
        if !o.retransmission && self.tlp_deadline.is_none() {
            self.arm_tlp(now);
        }
        true
    }

    /// RFC 5682 §3 step 2b: after the first ACK that follows a timeout, F-RTO sends up
    /// to two new segments (within the peer's window) before any more retransmissions.
    fn frto_new_segment(&mut self) -> Option<Outgoing> {
        if self.frto.as_ref().is_none_or(|f| f.new_segments == 0) {
            return None;
        }
        let o = self.next_new(u64::MAX);
        if let Some(f) = self.frto.as_mut() {
            f.new_segments = if o.is_some() { f.new_segments - 1 } else { 0 };
        }
        o
    }

    /// RFC 6675 §5 step (C): a lost segment, if the window has room (cwnd - pipe >= 1),
    /// or the one a timeout owes (RFC 6298 §5.4) whatever the window.
    fn next_retransmission(&self, cwnd: u64) -> Option<Outgoing> {
        if self.sb.pipe >= cwnd && !self.rto_retransmit {
            return None;
        }
        let (start, s) = self.sb.next_lost()?;
        Some(Outgoing {
            start,
            end: s.end,
            fin: s.fin,
            retransmission: true,
        })
    }

    /// New data (and the FIN after the last byte) within cwnd and the peer's window.
    fn next_new(&self, cwnd: u64) -> Option<Outgoing> {
        if self.sb.pipe >= cwnd {
            return None;
        }
        let right = self.sb.una + self.peer_window;
        let room = right.saturating_sub(self.sb.nxt);
        let unsent = self.sb.unsent();
        let len = unsent.min(self.smss).min(room);
        let fin_next = self.sb.fin_queued && !self.sb.fin_sent && len == unsent;
        if len == 0 && !fin_next {
            return None;
        }
        Some(Outgoing {
            start: self.sb.nxt,
            end: self.sb.nxt + len,
            fin: fin_next,
            retransmission: false,
        })
    }

    /// RFC 8985 §7.3: with no new data to send, the probe retransmits the last segment.
    fn probe_last(&self) -> Option<Outgoing> {
        let (start, s) = self.sb.last_segment()?;
        if s.sacked {
            return None;
        }
        Some(Outgoing {
            start,
            end: s.end,
            fin: s.fin,
            retransmission: true,
        })
    }
}
