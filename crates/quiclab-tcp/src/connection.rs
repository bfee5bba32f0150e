//! One TCP connection, sans-IO (RFC 9293): the driver hands it segments and the time,
//! and polls it for segments to send and for when to call it again. It never reads a
//! clock, a socket or a random source.
//!
//! Call contract (the same as `quiclab_proto::Connection`'s):
//! - [`TcpConnection::handle_segment`] for every segment addressed to it;
//! - then [`TcpConnection::poll_transmit`] until it returns `None`;
//! - [`TcpConnection::poll_timeout`] gives the next instant at which
//!   [`TcpConnection::handle_timeout`] must be called (then poll transmits again);
//! - the application side: [`TcpConnection::write`], [`TcpConnection::read`],
//!   [`TcpConnection::shutdown`] (send a FIN after the written bytes),
//!   [`TcpConnection::poll_event`].
//!
//! `now` must never go backwards between calls.

use crate::config::TcpConfig;
use crate::recv::Receiver;
use crate::scoreboard::{Scoreboard, Segment};
use crate::wire::{flags, Header, Options, WireError, MAX_SACK_BLOCKS};
use quiclab_proto::cc::CongestionController;
use quiclab_proto::{DeliveryRateEstimator, Ecn, Instant, Pacer, PacingRate, RttEstimator};
use std::collections::VecDeque;
use std::net::SocketAddrV4;
use std::time::Duration;

mod ack;
mod ecn;
mod fast_open;
mod frto;
#[cfg(feature = "fuzzing")]
mod fuzzing;
pub use fast_open::cookie as fast_open_cookie;
#[cfg(feature = "fuzzing")]
pub use fuzzing::TcpFootprint;
mod timers;
mod transmit;

/// RFC 9293 §3.3.2 states, as far as they matter to a driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Listen,
    SynSent,
    SynReceived,
    /// Data flows (ESTABLISHED and the FIN states until both FINs are acknowledged).
    Established,
    /// Both directions finished (TIME-WAIT is not simulated), or reset.
    Closed,
}

/// Something the application should know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The three-way handshake completed.
    Connected,
    /// The peer's FIN arrived after all its data.
    PeerFinished,
    /// The connection ended: both FINs acknowledged, or why not.
    Closed(CloseReason),
}

/// Why a connection closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Both sides sent and acknowledged a FIN.
    Finished,
    /// The peer sent RST (RFC 9293 §3.10.7.4).
    Reset,
    /// The SYN went unanswered through all retransmissions (RFC 9293 §3.8.3 R2).
    HandshakeTimeout,
}

/// A segment that cannot be processed. The connection's state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("segment from {0}, not this connection's peer")]
    WrongPeer(SocketAddrV4),
    #[error("segment for port {0}, not this connection's")]
    WrongPort(u16),
    #[error("no connection: {0}")]
    NoConnection(&'static str),
    #[error("acknowledges data never sent")]
    AckOfUnsent,
}

/// Where a segment goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddrV4,
    /// Bytes written into the caller's buffer (TCP header + data).
    pub size: usize,
    /// The IP ECN codepoint to send it with (not-ECT unless ECN was negotiated).
    pub ecn: Ecn,
}

/// Counters for results and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub handshake_completed_at: Option<Instant>,
    pub segments_sent: u64,
    pub segments_received: u64,
    pub data_segments_sent: u64,
    pub retransmitted_segments: u64,
    pub bytes_retransmitted: u64,
    pub lost_segments: u64,
    pub rto_count: u64,
    pub tlp_count: u64,
    /// Timeouts F-RTO found spurious and undid (RFC 5682).
    pub spurious_rtos: u64,
    pub recovery_episodes: u64,
    pub pure_acks_sent: u64,
    pub malformed_segments: u64,
    /// Segments that arrived CE-marked.
    pub ecn_ce_received: u64,
    /// Packets the peer reported CE-marked (AccECN's count, or ECE-flagged ACKs under
    /// classic ECN).
    pub ecn_ce_reported: u64,
    /// Segments sent ECN-capable (ECT(0) or ECT(1)).
    pub ect_segments_sent: u64,
}

/// The IPv4 and TCP header bytes the pacer charges per segment besides its data.
const PACED_HEADER_BYTES: u64 = 40;

/// Highest SYN retransmissions before giving up (Linux tcp_syn_retries = 6).
const SYN_RETRIES: u32 = 6;

/// A sans-IO TCP connection.
#[derive(Debug)]
pub struct TcpConnection {
    config: TcpConfig,
    state: State,
    local: SocketAddrV4,
    remote: Option<SocketAddrV4>,
    /// Initial send / receive sequence numbers (RFC 9293 §3.4.1).
    iss: u32,
    irs: u32,
    /// Negotiated options.
    sack: bool,
    timestamps: bool,
    /// Shift for windows we receive (the peer's) and advertise (ours).
    snd_shift: u8,
    rcv_shift: u8,
    /// Both SYNs carried a window scale option.
    ws_agreed: bool,
    /// Data bytes per segment (SMSS, RFC 5681 §2, minus option bytes).
    smss: u64,
    /// The peer's advertised window in bytes.
    peer_window: u64,
    /// RFC 7323 §4.3 TS.Recent.
    ts_recent: u32,
    sb: Scoreboard,
    rx: Receiver,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    delivery: DeliveryRateEstimator,
    app_limited: bool,
    pacer: Pacer,
    pacing_deadline: Option<Instant>,
    tx_count: u64,
    /// Our SYN (or SYN-ACK) must be sent; when it last was, how often.
    syn_pending: bool,
    syn_sent: Option<Instant>,
    syn_count: u32,
    /// Linux's RTT variance, kept for `rto = "linux"` (`linux_rto.rs`).
    linux_rttvar: crate::linux_rto::LinuxRttVar,
    /// RFC 6298 timer and its backoff exponent.
    rto_deadline: Option<Instant>,
    rto_backoff: u32,
    /// The timeout's retransmission of the first segment is owed: it goes whatever
    /// the window (RFC 6298 §5.4), which segments still in flight may fill.
    rto_retransmit: bool,
    /// RFC 8985 §7 TLP timer; a probe is owed / outstanding.
    tlp_deadline: Option<Instant>,
    tlp_pending: bool,
    tlp_out: bool,
    /// RFC 8985 §6.3 reordering timer.
    reorder_deadline: Option<Instant>,
    /// RFC 6675 RecoveryPoint while in loss recovery.
    recovery_point: Option<u64>,
    /// F-RTO's state after a timeout (`frto = true`, `connection/frto.rs`).
    frto: Option<frto::Frto>,
    /// PRR's state during a fast recovery (`recovery = "prr"`, `prr.rs`).
    prr: Option<crate::prr::Prr>,
    events: VecDeque<Event>,
    stats: TcpStats,
    close: Option<CloseReason>,
    peer_fin_reported: bool,
    /// TCP Fast Open (RFC 7413, `fast_open.rs`).
    tfo: fast_open::FastOpen,
    /// ECN (RFC 3168, RFC 9768, `ecn.rs`).
    ecn: ecn::EcnConn,
    /// The ECN feedback of the ACK being processed, for the controller's one call.
    pending_ce: ecn::CeFeedback,
    /// The codepoint of the segment `poll_transmit` just wrote.
    tx_ecn: Ecn,
}

impl TcpConnection {
    fn new(config: TcpConfig, local: SocketAddrV4, iss: u32, seed: u64) -> Self {
        let mss = u64::from(config.mss);
        let mut rx = Receiver::new(
            config.receive_buffer,
            config.ack_every,
            secs_ms(config.delayed_ack_ms),
            mss,
        );
        rx.set_quick_acks(config.quick_ack);
        let cc = config.congestion_control.build_seeded(mss, seed);
        let rtt = RttEstimator::new(secs_ms(config.initial_rto_ms) / 3);
        TcpConnection {
            state: State::Listen,
            local,
            remote: None,
            iss,
            irs: 0,
            sack: false,
            timestamps: false,
            snd_shift: 0,
            rcv_shift: 0,
            ws_agreed: false,
            smss: mss,
            peer_window: mss,
            ts_recent: 0,
            sb: Scoreboard::default(),
            rx,
            cc,
            rtt,
            delivery: DeliveryRateEstimator::new(),
            app_limited: false,
            pacer: Self::new_pacer(&config, mss),
            pacing_deadline: None,
            tx_count: 0,
            syn_pending: false,
            syn_sent: None,
            syn_count: 0,
            linux_rttvar: Default::default(),
            rto_deadline: None,
            rto_backoff: 0,
            rto_retransmit: false,
            tlp_deadline: None,
            tlp_pending: false,
            tlp_out: false,
            reorder_deadline: None,
            recovery_point: None,
            prr: None,
            frto: None,
            events: VecDeque::new(),
            stats: TcpStats::default(),
            close: None,
            peer_fin_reported: false,
            tfo: fast_open::FastOpen::default(),
            ecn: ecn::EcnConn::default(),
            pending_ce: ecn::CeFeedback::default(),
            tx_ecn: Ecn::NotEct,
            config,
        }
    }

    /// An active open to `remote` (RFC 9293 §3.5): the first `poll_transmit` sends the
    /// SYN. `iss` is the initial sequence number (the driver derives it from its seed);
    /// `seed` feeds the controller's randomised choices. The config must validate.
    pub fn connect(
        config: TcpConfig,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        iss: u32,
        seed: u64,
    ) -> Self {
        let mut c = Self::new(config, local, iss, seed);
        c.remote = Some(remote);
        c.state = State::SynSent;
        c.syn_pending = true;
        c
    }

    /// A passive open on `local` (LISTEN): the first SYN from any peer is accepted.
    pub fn listen(config: TcpConfig, local: SocketAddrV4, iss: u32, seed: u64) -> Self {
        Self::new(config, local, iss, seed)
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    pub fn remote(&self) -> Option<SocketAddrV4> {
        self.remote
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn congestion_window(&self) -> u64 {
        self.cc.window()
    }
    pub fn bytes_in_flight(&self) -> u64 {
        self.sb.pipe
    }
    /// Data bytes per full-sized segment, once negotiated.
    pub fn smss(&self) -> u64 {
        self.smss
    }
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.close.as_ref()
    }
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Queues `data` for sending; returns how many bytes the send buffer took.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.sb.fin_queued || self.state == State::Closed {
            return 0;
        }
        let room = self.config.send_buffer.saturating_sub(self.sb.buffered());
        let n = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        self.sb.write(&data[..n]);
        n
    }

    /// Send a FIN after the bytes written so far (RFC 9293 §3.10.4 CLOSE).
    pub fn shutdown(&mut self) {
        self.sb.fin_queued = true;
    }

    /// Reads in-order bytes into `buf`; returns how many. A read that frees buffer
    /// space worth a window update (two segments, RFC 9293 §3.8.6.2.2) sends one.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let before = self.rx.readable();
        let n = self.rx.read(buf);
        if before as u64 >= self.config.receive_buffer.saturating_sub(2 * self.smss) && n > 0 {
            self.rx.request_ack();
        }
        n
    }

    /// Bytes ready to read.
    pub fn readable(&self) -> usize {
        self.rx.readable()
    }

    /// The peer's FIN has been received and every byte before it read.
    pub fn peer_finished(&self) -> bool {
        self.rx.fin_delivered && self.rx.readable() == 0
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn wire_seq(&self, offset: u64) -> u32 {
        self.iss.wrapping_add(1).wrapping_add(offset as u32)
    }

    /// The peer's wire sequence number as our receive offset (nearest to RCV.NXT).
    fn peer_offset(&self, seq: u32) -> i64 {
        let base = self.irs.wrapping_add(1).wrapping_add(self.rx.next as u32);
        self.rx.next as i64 + i64::from(seq.wrapping_sub(base) as i32)
    }

    /// An acknowledgement number as our send offset (nearest to SND.UNA).
    fn ack_offset(&self, ack: u32) -> i64 {
        let base = self.wire_seq(self.sb.una);
        self.sb.una as i64 + i64::from(ack.wrapping_sub(base) as i32)
    }

    /// Handles one received segment from `src` that arrived not-ECT.
    pub fn handle_segment(
        &mut self,
        now: Instant,
        src: SocketAddrV4,
        segment: &[u8],
    ) -> Result<(), SegmentError> {
        self.handle_segment_ecn(now, src, Ecn::NotEct, segment)
    }

    /// Handles one received segment from `src` that arrived with IP ECN codepoint
    /// `ecn`.
    pub fn handle_segment_ecn(
        &mut self,
        now: Instant,
        src: SocketAddrV4,
        ecn: Ecn,
        segment: &[u8],
    ) -> Result<(), SegmentError> {
        let decoded = Header::decode(segment, src, self.local);
        let (h, off) = match decoded {
            Ok(x) => x,
            Err(e) => {
                self.stats.malformed_segments += 1;
                return Err(e.into());
            }
        };
        if h.dst_port != self.local.port() {
            return Err(SegmentError::WrongPort(h.dst_port));
        }
        if let Some(r) = self.remote {
            if r != src {
                return Err(SegmentError::WrongPeer(src));
            }
        }
        self.stats.segments_received += 1;
        let payload = &segment[off..];
        match self.state {
            State::Listen => self.on_listen(now, src, &h, ecn, payload),
            State::SynSent => self.on_syn_sent(now, &h, ecn, payload),
            State::Closed => Err(SegmentError::NoConnection("closed")),
            State::SynReceived | State::Established => self.on_synchronized(now, &h, ecn, payload),
        }
    }

    /// RFC 9293 §3.10.7.2: LISTEN takes a SYN.
    fn on_listen(
        &mut self,
        now: Instant,
        src: SocketAddrV4,
        h: &Header,
        ecn: Ecn,
        payload: &[u8],
    ) -> Result<(), SegmentError> {
        if !h.has(flags::SYN) || h.has(flags::ACK) || h.has(flags::RST) {
            return Err(SegmentError::NoConnection("listening: only a SYN opens"));
        }
        self.remote = Some(src);
        self.irs = h.seq;
        self.negotiate(&h.options, true);
        self.ecn_on_syn(h, ecn);
        self.peer_window = u64::from(h.window);
        self.state = State::SynReceived;
        self.syn_pending = true;
        self.fast_open_listen(now, h, payload);
        Ok(())
    }

    /// Options of the peer's SYN: what both sides use (RFC 7323 §2.2, §3.2; RFC 2018 §2).
    fn negotiate(&mut self, o: &Options, _server: bool) {
        self.sack = self.config.sack && o.sack_permitted;
        self.timestamps = self.config.timestamps && o.timestamps.is_some();
        if let Some((val, _)) = o.timestamps {
            self.ts_recent = val;
        }
        match (self.config.window_shift(), o.window_scale) {
            (Some(ours), Some(theirs)) => {
                self.rcv_shift = ours;
                // RFC 7323 §2.3: a shift above 14 is taken as 14.
                self.snd_shift = theirs.min(14);
                self.ws_agreed = true;
            }
            _ => {
                self.rcv_shift = 0;
                self.snd_shift = 0;
                self.ws_agreed = false;
            }
        }
        // RFC 9293 §3.7.1: absent MSS option means 536.
        let peer_mss = u64::from(o.mss.unwrap_or(536));
        let opt = if self.timestamps { 12 } else { 0 };
        self.smss = peer_mss
            .min(u64::from(self.config.mss))
            .saturating_sub(opt)
            .max(1);
        self.rx.set_mss(self.smss);
        let seed = self.iss.into();
        self.cc = self.config.congestion_control.build_seeded(self.smss, seed);
        self.pacer = Self::new_pacer(&self.config, self.smss);
    }

    /// RFC 9293 §3.10.7.3: SYN-SENT takes the SYN-ACK.
    fn on_syn_sent(
        &mut self,
        now: Instant,
        h: &Header,
        ecn: Ecn,
        payload: &[u8],
    ) -> Result<(), SegmentError> {
        // The SYN, and with TFO possibly the data it carried (RFC 7413 §4.2.1).
        let acked = h.ack.wrapping_sub(self.iss.wrapping_add(1));
        let acks_syn = h.has(flags::ACK) && u64::from(acked) <= self.tfo.syn_data;
        if h.has(flags::RST) {
            if acks_syn {
                self.close_with(CloseReason::Reset);
            }
            return Ok(());
        }
        if !(h.has(flags::SYN) && acks_syn) {
            return Err(SegmentError::NoConnection("SYN-SENT expects a SYN-ACK"));
        }
        self.irs = h.seq;
        self.negotiate(&h.options, false);
        self.ecn_on_syn_ack(h, ecn);
        // RFC 7323 §2.2: the window of a SYN segment is never scaled.
        self.peer_window = u64::from(h.window);
        self.establish(now);
        self.fast_open_syn_ack(now, h);
        self.rx.request_ack();
        if !payload.is_empty() {
            self.rx.on_data(now, 0, payload, h.has(flags::FIN));
        }
        Ok(())
    }

    /// The handshake is complete on this side: the SYN was acknowledged.
    fn establish(&mut self, now: Instant) {
        self.state = State::Established;
        self.syn_pending = false;
        if let Some(sent) = self.syn_sent {
            // RFC 6298 §2 / Karn: only an unretransmitted SYN gives a sample.
            if self.syn_count == 1 {
                let sample = now.saturating_duration_since(sent);
                self.rtt_sample(sample);
            }
        }
        self.rto_deadline = None;
        self.rto_backoff = 0;
        self.stats.handshake_completed_at = Some(now);
        self.events.push_back(Event::Connected);
    }

    fn close_with(&mut self, reason: CloseReason) {
        if self.state != State::Closed {
            self.state = State::Closed;
            self.close = Some(reason.clone());
            self.events.push_back(Event::Closed(reason));
            self.rto_deadline = None;
            self.tlp_deadline = None;
            self.reorder_deadline = None;
            self.pacing_deadline = None;
        }
    }

    /// SYN-RECEIVED and later (RFC 9293 §3.10.7.4).
    fn on_synchronized(
        &mut self,
        now: Instant,
        h: &Header,
        ecn: Ecn,
        payload: &[u8],
    ) -> Result<(), SegmentError> {
        let off = self.peer_offset(h.seq);
        if h.has(flags::RST) {
            // RFC 5961 §3.2: only an RST exactly at RCV.NXT resets.
            if off == self.rx.next as i64 {
                self.close_with(CloseReason::Reset);
            }
            return Ok(());
        }
        if h.has(flags::SYN) {
            // A retransmitted SYN (our SYN-ACK was lost) or SYN-ACK (our ACK was).
            if self.state == State::SynReceived {
                self.syn_pending = true;
                self.ecn_on_syn(h, ecn);
            } else {
                self.rx.request_ack();
            }
            return Ok(());
        }
        if !h.has(flags::ACK) {
            return Ok(()); // RFC 9293 §3.10.7.4 fifth check: drop.
        }
        let syn_received = self.state == State::SynReceived;
        if syn_received && h.ack != self.iss.wrapping_add(1) && self.ack_offset(h.ack) < 0 {
            return Err(SegmentError::NoConnection(
                "ACK does not acknowledge our SYN",
            ));
        }
        let handshake_ace = self.ecn_on_segment(h, ecn, payload.len());
        if syn_received {
            self.establish(now);
        }
        if self.timestamps {
            if let Some((val, _)) = h.options.timestamps {
                // RFC 7323 §4.3: TS.Recent from segments at or before RCV.NXT.
                if off <= self.rx.next as i64 {
                    self.ts_recent = val;
                }
            }
        }
        self.on_ack(now, h, handshake_ace)?;
        if (!payload.is_empty() || h.has(flags::FIN)) && off >= 0 {
            self.rx.on_data(now, off as u64, payload, h.has(flags::FIN));
        } else if !payload.is_empty() {
            // Entirely old data (or a keep-alive): ACK it.
            self.rx.request_ack();
        }
        if self.rx.fin_delivered && !self.peer_fin_reported {
            self.peer_fin_reported = true;
            self.events.push_back(Event::PeerFinished);
        }
        self.check_closed();
        Ok(())
    }

    fn check_closed(&mut self) {
        if self.sb.fin_acked && self.rx.fin_delivered && !self.rx.ack_due(Instant::MAX) {
            self.close_with(CloseReason::Finished);
        }
    }

    /// The pacing rate: the controller's when it sets one (BBR); else with `pacing` on,
    /// `pacing_ratio`'s multiple of cwnd / SRTT (by default QUIC's RFC 9002 §7.7 rate
    /// 1.25 · cwnd / SRTT, as `quiclab_proto`'s paths); else none: window-based
    /// controllers send in bursts, as Linux TCP without fq does.
    fn pacing_rate(&self) -> Option<PacingRate> {
        match self.cc.pacing_rate() {
            Some(rate) => PacingRate::from_bytes_per_sec(rate),
            None if self.config.pacing => self.config.pacing_ratio.rate(
                self.cc.window(),
                self.cc.ssthresh(),
                self.bytes_in_flight(),
                self.rtt.smoothed(),
            ),
            None => None,
        }
    }

    /// The size a full segment waits for in the pacer: with `pacing` on, its data and
    /// headers, as `on_sent` charges; off, its data only (as before the knob).
    fn paced_size(&self) -> u64 {
        if self.config.pacing {
            self.smss.saturating_add(PACED_HEADER_BYTES)
        } else {
            self.smss
        }
    }

    /// QUIC's pacer with a bucket of `pacing_burst` segments. With `pacing` on they
    /// are counted with the 40 header bytes the pacer charges per segment (so a full
    /// bucket is that many back to back); off, as before the knob, in data bytes.
    fn new_pacer(config: &TcpConfig, smss: u64) -> Pacer {
        let segment = if config.pacing {
            smss.saturating_add(PACED_HEADER_BYTES)
        } else {
            smss
        };
        Pacer::with_burst(u64::from(config.pacing_burst).saturating_mul(segment))
    }

    fn header(&mut self, now: Instant, seq: u32, fl: u8) -> Header {
        let mut options = Options::default();
        if self.timestamps {
            options.timestamps = Some((ts_val(now), self.ts_recent));
        }
        let wnd = if fl & flags::SYN != 0 {
            self.rx.window().min(65_535)
        } else {
            (self.rx.window() >> self.rcv_shift).min(65_535)
        };
        let ack = if fl & flags::ACK != 0 {
            let fin = u64::from(self.rx.fin_delivered);
            self.irs
                .wrapping_add(1)
                .wrapping_add((self.rx.next + fin) as u32)
        } else {
            0
        };
        if self.sack && fl & flags::ACK != 0 && fl & flags::SYN == 0 {
            let max = if self.timestamps { 3 } else { MAX_SACK_BLOCKS };
            options.sack = self
                .rx
                .sack_blocks(max)
                .into_iter()
                .map(|(l, r)| {
                    let base = self.irs.wrapping_add(1);
                    (base.wrapping_add(l as u32), base.wrapping_add(r as u32))
                })
                .collect();
        }
        Header {
            src_port: self.local.port(),
            dst_port: self.remote.map_or(0, |r| r.port()),
            seq,
            ack,
            flags: fl,
            ae: false,
            window: wnd as u16,
            options,
        }
    }
}

/// RFC 7323 §5.4: a timestamp clock of 1 ms ticks.
fn ts_val(now: Instant) -> u32 {
    (now.as_nanos() / 1_000_000) as u32
}

fn secs_ms(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1e6) as u64)
}

/// The data a transmission of [start, end) carries, with the FIN flag.
pub(crate) struct Outgoing {
    pub start: u64,
    pub end: u64,
    pub fin: bool,
    pub retransmission: bool,
}

/// Marks a segment as sent with the given snapshot for the scoreboard.
pub(crate) fn new_segment(
    o: &Outgoing,
    now: Instant,
    tx: u64,
    snap: quiclab_proto::DeliverySnapshot,
) -> Segment {
    Segment {
        end: o.end,
        fin: o.fin,
        sent: now,
        tx,
        retransmitted: false,
        sacked: false,
        lost: false,
        in_flight: true,
        snapshot: snap,
    }
}
