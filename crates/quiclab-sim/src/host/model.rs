//! A host model at run time: one CPU that serialises an endpoint's per-packet work,
//! its receive queue and socket buffers, GSO batches, and its timers' lateness.
//!
//! Modelling assumptions (stated in docs/book/src/guide/hosts.md): one core per endpoint,
//! work served first come first served (a receive waits behind a send and the reverse);
//! a received datagram reaches the endpoint when its CPU work ends, a sent one leaves
//! when its batch's work ends; socket buffers count datagram payload bytes (Linux
//! charges the skb's truesize, more for small datagrams); a timer due now fires now
//! (a busy event loop does not sleep), one in the future at the next multiple of the
//! granularity plus a drawn wake-up latency.

use super::config::{HostConfig, Latency};
use super::stats::HostStats;
use quiclab_link::link::Packet;
use quiclab_proto::{DetRng, Instant};
use std::collections::VecDeque;
use std::time::Duration;

/// One endpoint's host (see the module docs).
pub struct HostModel {
    cfg: HostConfig,
    rng: DetRng,
    /// When the CPU finishes the work it has taken on.
    busy_until: Instant,
    /// Received datagrams: the one in service (if `in_service`) first, then those waiting.
    rx: VecDeque<Packet>,
    in_service: bool,
    rx_waiting_bytes: u64,
    /// Closed GSO batches: departure time and datagrams.
    tx: VecDeque<(Instant, Packet)>,
    /// The open batch: its datagrams and when its work ends so far.
    open: Vec<Packet>,
    open_end: Instant,
    tx_bytes: u64,
    /// The timer asked for and the time it was set to fire.
    timer: Option<(Instant, Instant)>,
    pub stats: HostStats,
}

/// `us` microseconds plus `bytes` at `ns_per_byte`, rounded to whole nanoseconds.
fn cost(us: f64, ns_per_byte: f64, bytes: usize) -> Duration {
    Duration::from_nanos((us * 1e3 + ns_per_byte * bytes as f64).round() as u64)
}

impl HostModel {
    /// A host with `cfg` (validated) and its own random stream from `seed`.
    pub fn new(cfg: HostConfig, seed: u64) -> Self {
        HostModel {
            cfg,
            rng: DetRng::new(seed),
            busy_until: Instant::ZERO,
            rx: VecDeque::new(),
            in_service: false,
            rx_waiting_bytes: 0,
            tx: VecDeque::new(),
            open: Vec::new(),
            open_end: Instant::ZERO,
            tx_bytes: 0,
            timer: None,
            stats: HostStats::default(),
        }
    }

    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }

    fn per_byte(&self) -> f64 {
        self.cfg.per_byte_ns + self.cfg.crypto_per_byte_ns
    }

    /// Takes `d` of CPU work from `now` on (after what it already has); returns its end.
    fn work(&mut self, now: Instant, d: Duration) -> Instant {
        let end = self.busy_until.max(now) + d;
        self.busy_until = end;
        self.stats.busy_ns += d.as_nanos() as u64;
        end
    }

    /// A datagram arrives from the network. `Err` gives it back when the receive queue
    /// or socket buffer is full (counted); `Ok(Some(t))`: the CPU took it on and is done
    /// at `t` (call [`HostModel::complete`] then).
    pub fn admit(&mut self, now: Instant, pkt: Packet) -> Result<Option<Instant>, Packet> {
        let waiting = (self.rx.len() - usize::from(self.in_service)) as u64;
        if self.cfg.rx_queue_packets.is_some_and(|q| waiting >= q) {
            self.stats.rx_queue_drops += 1;
            return Err(pkt);
        }
        let size = pkt.payload.len() as u64;
        if (self.cfg.socket_rcvbuf).is_some_and(|b| self.rx_waiting_bytes + size > b) {
            self.stats.socket_drops += 1;
            return Err(pkt);
        }
        self.rx_waiting_bytes += size;
        self.rx.push_back(pkt);
        self.stats.max_rx_waiting = self.stats.max_rx_waiting.max(waiting + 1);
        Ok(self.start_next(now))
    }

    /// Starts the CPU on the first waiting datagram, if it is free and one waits.
    fn start_next(&mut self, now: Instant) -> Option<Instant> {
        if self.in_service {
            return None;
        }
        let size = self.rx.front()?.payload.len();
        self.in_service = true;
        self.rx_waiting_bytes -= size as u64;
        let d = cost(self.cfg.recv_cost_us, self.per_byte(), size);
        Some(self.work(now, d))
    }

    /// The CPU finished the datagram in service: it goes to the endpoint; the next one's
    /// end time, if one waits.
    pub fn complete(&mut self, now: Instant) -> (Option<Packet>, Option<Instant>) {
        let done = if self.in_service {
            self.in_service = false;
            self.stats.rx_packets += 1;
            self.rx.pop_front()
        } else {
            None
        };
        (done, self.start_next(now))
    }

    /// The send buffer has room: the endpoint may be asked for a datagram.
    pub fn can_send(&mut self) -> bool {
        let ok = self.cfg.socket_sndbuf.is_none_or(|b| self.tx_bytes < b);
        if !ok {
            self.stats.sndbuf_blocked += 1;
        }
        ok
    }

    /// A datagram the endpoint wrote: it joins the open GSO batch (or opens one). When
    /// that closes the batch, its departure time (call [`HostModel::departures`] then).
    pub fn send(&mut self, now: Instant, pkt: Packet) -> Option<Instant> {
        let size = pkt.payload.len();
        let fixed = if self.open.is_empty() {
            self.cfg.send_cost_us
        } else {
            0.0
        };
        self.open_end = self.work(now, cost(fixed, self.per_byte(), size));
        self.tx_bytes += size as u64;
        self.stats.tx_packets += 1;
        self.open.push(pkt);
        if self.open.len() >= self.cfg.gso_segments.unwrap_or(1) as usize {
            return self.close_batch();
        }
        None
    }

    /// Closes the open GSO batch (the endpoint has nothing more to send now); its
    /// departure time.
    pub fn close_batch(&mut self) -> Option<Instant> {
        if self.open.is_empty() {
            return None;
        }
        let at = self.open_end;
        self.stats.tx_batches += 1;
        self.tx.extend(self.open.drain(..).map(|p| (at, p)));
        Some(at)
    }

    /// The datagrams whose batch is done by `now`, in order.
    pub fn departures(&mut self, now: Instant) -> Vec<Packet> {
        let mut out = Vec::new();
        while self.tx.front().is_some_and(|(at, _)| *at <= now) {
            let (_, p) = self.tx.pop_front().expect("checked");
            self.tx_bytes -= p.payload.len() as u64;
            out.push(p);
        }
        out
    }

    /// When a timer asked for `next` fires: now if due (no sleep), else at the next
    /// multiple of the granularity plus a wake-up latency, drawn once per time asked.
    pub fn timer(&mut self, now: Instant, next: Option<Instant>) -> Option<Instant> {
        let Some(next) = next else {
            self.timer = None;
            return None;
        };
        if next <= now {
            self.timer = None;
            return Some(next);
        }
        if let Some((asked, at)) = self.timer {
            if asked == next {
                return Some(at);
            }
        }
        let g = (self.cfg.timer_granularity_us * 1e3).round() as u64;
        let t = next.as_nanos();
        let rounded = if g > 0 {
            t.div_ceil(g).saturating_mul(g)
        } else {
            t
        };
        let at = Instant::from_nanos(rounded.saturating_add(self.draw_latency_ns()));
        self.timer = Some((next, at));
        Some(at)
    }

    /// A wake-up latency from the configured distribution, ns.
    fn draw_latency_ns(&mut self) -> u64 {
        let us = match &self.cfg.wakeup_latency {
            None => 0.0,
            Some(Latency::Fixed { us }) => *us,
            Some(Latency::Uniform { min_us, max_us }) => {
                min_us + (max_us - min_us) * self.rng.next_f64()
            }
            Some(Latency::Empirical { samples, .. }) => {
                samples[self.rng.range(0, samples.len() as u64) as usize]
            }
        };
        (us * 1e3).round() as u64
    }

    /// The node's timer fired at `now`: counts the wake-up and its lateness.
    pub fn on_timer(&mut self, now: Instant) {
        if let Some((asked, at)) = self.timer.take() {
            if at <= now {
                let late = now.saturating_duration_since(asked).as_nanos() as u64;
                self.stats.timer_wakes += 1;
                self.stats.late_sum_ns += late;
                self.stats.timer_late_max_us =
                    (self.stats.timer_late_max_us).max(late as f64 / 1e3);
            }
        }
    }
}
