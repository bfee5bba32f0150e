//! ECN end to end over an in-memory path whose "network" may CE-mark or drop each
//! segment: classic ECN (RFC 3168 §6.1) and Accurate ECN feedback (RFC 9768), their
//! negotiation and their effect on the sender.

use quiclab_proto::{Ecn, Instant};
use quiclab_tcp::ecn::{EcnCodepoint, EcnSetting, Feedback};
use quiclab_tcp::wire::{flags, Header};
use quiclab_tcp::{TcpConfig, TcpConnection};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

/// What the network does to a segment: (sender index, header, payload length, the
/// codepoint it was sent with) -> the codepoint it arrives with, or `None` (dropped).
type Network = Box<dyn FnMut(usize, &Header, usize, Ecn) -> Option<Ecn>>;

/// One segment as it was sent.
#[derive(Clone, Debug)]
struct Sent {
    from: usize,
    h: Header,
    len: usize,
    ecn: Ecn,
    /// The sender's congestion window after sending it.
    cwnd: u64,
}

struct Path {
    eps: [TcpConnection; 2],
    addrs: [SocketAddrV4; 2],
    queue: BTreeMap<(Instant, u64), (usize, Ecn, Vec<u8>)>,
    seq: u64,
    now: Instant,
    net: Network,
    /// The client's segments are serialised at this many bytes per second.
    rate: u64,
    busy_until: Instant,
    sent: Vec<Sent>,
    to_send: u64,
    written: u64,
    received: u64,
}

fn config(ecn: EcnSetting) -> TcpConfig {
    TcpConfig {
        ecn,
        ..TcpConfig::default()
    }
}

impl Path {
    fn new(client: TcpConfig, server: TcpConfig) -> Path {
        let a = [
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40000),
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 1), 443),
        ];
        Path {
            eps: [
                TcpConnection::connect(client, a[0], a[1], 1000, 1),
                TcpConnection::listen(server, a[1], 77, 2),
            ],
            addrs: a,
            queue: BTreeMap::new(),
            seq: 0,
            now: Instant::ZERO,
            net: Box::new(|_, _, _, ecn| Some(ecn)),
            rate: 2_500_000,
            busy_until: Instant::ZERO,
            sent: Vec::new(),
            to_send: 0,
            written: 0,
            received: 0,
        }
    }

    fn flush(&mut self) {
        let mut buf = Vec::new();
        for i in 0..2 {
            while let Some(t) = self.eps[i].poll_transmit(self.now, &mut buf) {
                let (h, off) = Header::decode_unchecked(&buf).unwrap();
                let len = buf.len() - off;
                self.sent.push(Sent {
                    from: i,
                    h: h.clone(),
                    len,
                    ecn: t.ecn,
                    cwnd: self.eps[i].congestion_window(),
                });
                let Some(ecn) = (self.net)(i, &h, len, t.ecn) else {
                    continue;
                };
                self.seq += 1;
                let mut at = self.now;
                if i == 0 {
                    let tx = Duration::from_nanos(buf.len() as u64 * 1_000_000_000 / self.rate);
                    self.busy_until = self.busy_until.max(self.now) + tx;
                    at = self.busy_until;
                }
                let at = at + Duration::from_millis(10);
                self.queue.insert((at, self.seq), (1 - i, ecn, buf.clone()));
            }
        }
    }

    fn app(&mut self) {
        if self.eps[0].is_established() && self.written < self.to_send {
            let chunk = vec![7u8; 65536];
            let want = ((self.to_send - self.written) as usize).min(chunk.len());
            self.written += self.eps[0].write(&chunk[..want]) as u64;
            if self.written == self.to_send {
                self.eps[0].shutdown();
            }
        }
        let mut buf = [0u8; 65536];
        loop {
            let n = self.eps[1].read(&mut buf);
            if n == 0 {
                break;
            }
            self.received += n as u64;
        }
        if self.eps[1].peer_finished() && self.eps[1].is_established() {
            self.eps[1].shutdown();
        }
    }

    fn run(&mut self, until_ms: u64) {
        let until = Instant::from_millis(until_ms);
        loop {
            self.app();
            self.flush();
            let next = [
                self.queue.keys().next().map(|k| k.0),
                self.eps[0].poll_timeout(),
                self.eps[1].poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else { return };
            if t > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(t);
            while let Some(entry) = self.queue.first_entry() {
                if entry.key().0 > self.now {
                    break;
                }
                let (to, ecn, seg) = entry.remove();
                let from = self.addrs[1 - to];
                let _ = self.eps[to].handle_segment_ecn(self.now, from, ecn, &seg);
            }
            for ep in &mut self.eps {
                if ep.poll_timeout().is_some_and(|t| t <= self.now) {
                    ep.handle_timeout(self.now);
                }
            }
        }
    }

    /// The data segments the client sent (payload > 0), in order.
    fn client_data(&self) -> Vec<&Sent> {
        self.sent
            .iter()
            .filter(|s| s.from == 0 && s.len > 0)
            .collect()
    }

    /// The server's segments after its SYN-ACK.
    fn server_acks(&self) -> Vec<&Sent> {
        self.sent
            .iter()
            .filter(|s| s.from == 1 && !s.h.has(flags::SYN))
            .collect()
    }
}

/// A network that CE-marks the ECN-capable client data segments whose index (among
/// data segments sent, from 1) `mark` picks.
fn marking(mut mark: impl FnMut(u64) -> bool + 'static) -> Network {
    let mut n = 0;
    Box::new(move |from, _, len, ecn| {
        if from == 0 && len > 0 {
            n += 1;
            if ecn.is_ect() && mark(n) {
                return Some(Ecn::Ce);
            }
        }
        Some(ecn)
    })
}

#[test]
fn negotiation_matrix_end_to_end() {
    use EcnSetting::*;
    use Feedback as F;
    for (client, server, want) in [
        (AccEcn, AccEcn, F::AccEcn),
        (AccEcn, Classic, F::Classic),
        (AccEcn, Off, F::NotEcn),
        (Classic, AccEcn, F::Classic),
        (Classic, Classic, F::Classic),
        (Classic, Off, F::NotEcn),
        (Off, AccEcn, F::NotEcn),
        (Off, Off, F::NotEcn),
    ] {
        let mut p = Path::new(config(client), config(server));
        p.to_send = 50_000;
        p.run(5_000);
        assert_eq!(p.received, 50_000);
        let modes = (p.eps[0].ecn_feedback(), p.eps[1].ecn_feedback());
        assert_eq!(modes, (want, want), "{client:?} -> {server:?}");
        // SYN and SYN-ACK are never ECT (RFC 3168 §6.1.1); data is ECT(0) only with
        // ECN; pure ACKs never.
        for s in &p.sent {
            let data = s.len > 0 && !s.h.has(flags::SYN);
            let want_ecn = if data && want != F::NotEcn {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            };
            assert_eq!(s.ecn, want_ecn, "{client:?}/{server:?}: {s:?}");
        }
    }
}

#[test]
fn the_client_acks_the_syn_ack_with_the_handshake_encoding() {
    let mut p = Path::new(config(EcnSetting::AccEcn), config(EcnSetting::AccEcn));
    p.run(1_000);
    let syn = &p.sent[0];
    assert!(syn.h.ae && syn.h.has(flags::CWR) && syn.h.has(flags::ECE));
    // RFC 9768 Table 2: a not-ECT SYN is fed back as (0,1,0).
    let syn_ack = p.sent.iter().find(|s| s.from == 1).unwrap();
    assert!(!syn_ack.h.ae && syn_ack.h.has(flags::CWR) && !syn_ack.h.has(flags::ECE));
    // Table 3: the pure ACK of a not-ECT SYN-ACK carries ACE 0b010.
    let ack = p.sent.iter().filter(|s| s.from == 0).nth(1).unwrap();
    assert_eq!(ack.len, 0);
    assert!(!ack.h.ae && ack.h.has(flags::CWR) && !ack.h.has(flags::ECE));
}

#[test]
fn classic_ece_is_latched_until_cwr_and_the_window_drops_once() {
    let mut p = Path::new(config(EcnSetting::Classic), config(EcnSetting::Classic));
    p.net = marking(|n| n == 40);
    p.to_send = 400_000;
    p.run(20_000);
    assert_eq!(p.received, 400_000);
    let client = p.eps[0].stats();
    assert_eq!(client.retransmitted_segments, 0, "a mark is not a loss");
    assert_eq!(client.lost_segments, 0);
    assert_eq!(p.eps[1].stats().ecn_ce_received, 1);
    // Exactly one CWR, on new data (RFC 3168 §6.1.2).
    let data = p.client_data();
    let at = data.iter().position(|s| s.h.has(flags::CWR)).unwrap();
    assert_eq!(data.iter().filter(|s| s.h.has(flags::CWR)).count(), 1);
    // The window was reduced before it (by the controller's factor, at most 0.7).
    let before = data[..at].iter().map(|s| s.cwnd).max().unwrap();
    assert!(
        (data[at].cwnd as f64) <= 0.7 * before as f64 + 1.0,
        "{} after, {before} before",
        data[at].cwnd
    );
    // The receiver sets ECE from the mark on every ACK until CWR arrives, then never.
    let acks = p.server_acks();
    let first_ece = acks.iter().position(|s| s.h.has(flags::ECE)).unwrap();
    let last_ece = acks.iter().rposition(|s| s.h.has(flags::ECE)).unwrap();
    assert!(
        acks[first_ece..=last_ece]
            .iter()
            .all(|s| s.h.has(flags::ECE)),
        "ECE latched"
    );
    assert!(last_ece > first_ece, "more than one ACK carried it");
    assert!(client.ecn_ce_reported >= 2, "{client:?}");
}

#[test]
fn classic_marks_within_one_window_reduce_once() {
    // Every data segment from the 40th to the 60th is marked: one window's worth,
    // one reduction, one CWR.
    let run = |mark: fn(u64) -> bool| {
        let mut p = Path::new(config(EcnSetting::Classic), config(EcnSetting::Classic));
        p.net = marking(mark);
        p.to_send = 300_000;
        p.run(20_000);
        let cwr = p
            .client_data()
            .iter()
            .filter(|s| s.h.has(flags::CWR))
            .count();
        (cwr, p.eps[0].stats().retransmitted_segments)
    };
    assert_eq!(run(|n| (40..=60).contains(&n)), (1, 0));
    // Marks far apart (more than a round trip): one reduction each.
    assert_eq!(run(|n| n == 40 || n == 150), (2, 0));
}

#[test]
fn classic_retransmissions_are_not_ect_and_accecn_ones_are() {
    for (setting, want) in [
        (EcnSetting::Classic, Ecn::NotEct),
        (EcnSetting::AccEcn, Ecn::Ect0),
    ] {
        let mut p = Path::new(config(setting), config(setting));
        let mut n = 0;
        p.net = Box::new(move |from, _, len, ecn| {
            if from == 0 && len > 0 {
                n += 1;
                if n == 30 {
                    return None;
                }
            }
            Some(ecn)
        });
        p.to_send = 200_000;
        p.run(20_000);
        assert_eq!(p.received, 200_000);
        let data = p.client_data();
        let first = data[29];
        let again: Vec<_> = data
            .iter()
            .skip(30)
            .filter(|s| s.h.seq == first.h.seq)
            .collect();
        assert_eq!(again.len(), 1, "{setting:?}: one retransmission");
        assert_eq!(again[0].ecn, want, "{setting:?}");
        assert_eq!(first.ecn, Ecn::Ect0);
    }
}

#[test]
fn accecn_counts_every_mark_and_prague_settings_send_ect1() {
    let prague = TcpConfig {
        ecn: EcnSetting::AccEcn,
        ecn_codepoint: EcnCodepoint::Ect1,
        ..TcpConfig::default()
    };
    let mut p = Path::new(prague.clone(), prague);
    // Every third data segment marked: well over 8 marks, the ACE field wraps often.
    p.net = marking(|n| n % 3 == 0);
    p.to_send = 300_000;
    p.run(30_000);
    assert_eq!(p.received, 300_000);
    let received = p.eps[1].stats().ecn_ce_received;
    assert!(received > 50, "{received}");
    assert_eq!(p.eps[0].stats().ecn_ce_reported, received);
    assert_eq!(p.eps[0].stats().retransmitted_segments, 0);
    assert!(p.client_data().iter().all(|s| s.ecn == Ecn::Ect1));
    // The option reported the bytes: all data ECT(1) or CE, none ECT(0).
    let (e0, e1, ce) = p.eps[0].accecn_bytes_reported();
    assert_eq!(e0, 0);
    assert!(e1 > 0 && ce > 0);
    assert_eq!(e1 + ce, 300_000);
    // AccECN never uses CWR as a signal, so the client's data has no "CWR-only"
    // pattern to check; its pure ACKs carry the option.
    let acks = p.server_acks();
    assert!(acks
        .iter()
        .filter(|s| s.len == 0)
        .all(|s| s.h.options.accecn.is_some()));
}

#[test]
fn accecn_counts_exactly_through_ack_loss_with_the_option() {
    // Lose 3 of every 4 ACKs for a while: a surviving ACK covers 8 marked packets,
    // which leaves the ACE field where it was. The option's CE bytes make the count
    // exact (RFC 9768 Appendix A.2.2).
    let mut p = Path::new(config(EcnSetting::AccEcn), config(EcnSetting::AccEcn));
    let mut m = 0;
    let mut acks = 0;
    p.net = Box::new(move |from, h, len, ecn| {
        if from == 0 && len > 0 {
            m += 1;
            if ecn.is_ect() && m > 5 {
                return Some(Ecn::Ce);
            }
        } else if from == 1 && len == 0 && !h.has(flags::SYN) && !h.has(flags::FIN) {
            acks += 1;
            if (10..60).contains(&acks) && acks % 4 != 0 {
                return None;
            }
        }
        Some(ecn)
    });
    p.to_send = 200_000;
    p.run(30_000);
    assert_eq!(
        p.received,
        200_000,
        "{:?} {:?}",
        p.eps[0].stats(),
        p.eps[1].stats()
    );
    assert_eq!(
        p.eps[0].stats().ecn_ce_reported,
        p.eps[1].stats().ecn_ce_received
    );
}

#[test]
fn a_syn_retransmitted_twice_falls_back_to_no_ecn() {
    let mut p = Path::new(config(EcnSetting::AccEcn), config(EcnSetting::AccEcn));
    let mut syns = 0;
    p.net = Box::new(move |from, h, _, ecn| {
        if from == 0 && h.has(flags::SYN) {
            syns += 1;
            if syns <= 2 {
                return None;
            }
        }
        Some(ecn)
    });
    p.to_send = 10_000;
    p.run(20_000);
    let syn_bits: Vec<_> = p
        .sent
        .iter()
        .filter(|s| s.from == 0 && s.h.has(flags::SYN))
        .map(|s| (s.h.ae, s.h.has(flags::CWR), s.h.has(flags::ECE)))
        .collect();
    // RFC 9768 §3.1.4.1: the first retransmission still asks, later ones do not.
    assert_eq!(
        syn_bits,
        vec![
            (true, true, true),
            (true, true, true),
            (false, false, false)
        ]
    );
    assert_eq!(p.eps[0].ecn_feedback(), Feedback::NotEcn);
    assert_eq!(p.received, 10_000);
}
