//! The simulator's side of the host model (`host/`): datagrams arriving at a node with
//! a host wait for its CPU before the endpoint sees them, datagrams it writes leave when
//! their GSO batch's CPU work is done, and its timers fire late as the host's do.

use super::{App, Ev, Simulation, Stack};
use crate::host::{HostModel, HostStats};
use crate::net::topology::derive_seed;
use crate::scenario::ScenarioError;
use quiclab_link::link::Packet;
use quiclab_proto::Instant;
use std::time::Duration;

impl Simulation {
    /// Flow `i`'s client and server host models (`None`: no host table, or all off).
    pub(super) fn host_models(
        &self,
        i: usize,
    ) -> Result<[Option<Box<HostModel>>; 2], ScenarioError> {
        let name = &self.scenario.flows[i].name;
        let mut out = [None, None];
        for (k, side) in ["client", "server"].into_iter().enumerate() {
            let cfg = self.scenario.host(i, k == 1, &self.file)?;
            out[k] = cfg.map(|c| {
                let seed = derive_seed(self.scenario.seed, &format!("host:{name}:{side}"));
                Box::new(HostModel::new(c, seed))
            });
        }
        Ok(out)
    }

    /// A datagram reached node `n`, which has a host: it waits for the CPU (or is
    /// dropped at a full receive queue or socket buffer).
    pub(super) fn host_arrive(&mut self, n: usize, pkt: Packet) {
        let now = self.now;
        let Some(m) = self.nodes[n].model.as_mut() else {
            return;
        };
        match m.admit(now, pkt) {
            Ok(Some(at)) => self.events.push(at, Ev::HostRx(n)),
            Ok(None) => {}
            Err(p) => self.spare.push(p.payload),
        }
    }

    /// Node `n`'s CPU finished a received datagram: the endpoint gets it.
    pub(super) fn host_rx_done(&mut self, n: usize) {
        let now = self.now;
        let Some(m) = self.nodes[n].model.as_mut() else {
            return;
        };
        let (done, next) = m.complete(now);
        if let Some(at) = next {
            self.events.push(at, Ev::HostRx(n));
        }
        if let Some(p) = done {
            self.feed(n, p);
        }
    }

    /// A datagram node `n` wrote: its host sends it (now, or when its batch is done).
    pub(super) fn emit(&mut self, n: usize, pkt: Packet) {
        let now = self.now;
        match self.nodes[n].model.as_mut() {
            Some(m) => {
                if let Some(at) = m.send(now, pkt) {
                    self.events.push(at, Ev::HostTx(n));
                }
            }
            None => self.launch(pkt),
        }
    }

    /// Node `n` has nothing more to send now: its open GSO batch goes.
    pub(super) fn close_batch(&mut self, n: usize) {
        if let Some(at) = self.nodes[n].model.as_mut().and_then(|m| m.close_batch()) {
            self.events.push(at, Ev::HostTx(n));
        }
    }

    /// Node `n`'s batches due now leave the host; its send buffer has room again.
    pub(super) fn host_tx_due(&mut self, n: usize) {
        let now = self.now;
        let Some(m) = self.nodes[n].model.as_mut() else {
            return;
        };
        for p in m.departures(now) {
            self.launch(p);
        }
        self.dirty.insert(n);
    }

    /// Node `n` may be asked for a datagram (its send buffer has room, or no host).
    pub(super) fn can_send(&mut self, n: usize) -> bool {
        self.nodes[n].model.as_mut().is_none_or(|m| m.can_send())
    }

    /// When node `n`'s timer asked for `next` fires (its host's granularity and wake-up
    /// latency; exactly then without a host).
    pub(super) fn host_timer(&mut self, n: usize, next: Option<Instant>) -> Option<Instant> {
        let now = self.now;
        match self.nodes[n].model.as_mut() {
            Some(m) => m.timer(now, next),
            None => next,
        }
    }

    /// Node `n`'s timer fired: its host counts the wake-up's lateness.
    pub(super) fn host_on_timer(&mut self, n: usize) {
        let now = self.now;
        if let Some(m) = self.nodes[n].model.as_mut() {
            m.on_timer(now);
        }
    }

    /// A server stack whose host holds responses `app_delay_ms` (only a QUIC request
    /// flow's server has one: `scenario/hosts.rs` checks).
    pub(super) fn with_app_delay(stack: Stack, model: Option<&HostModel>) -> Stack {
        let delay = model.map_or(0.0, |m| m.config().app_delay_ms);
        match stack {
            Stack::Quic {
                endpoint,
                app: App::Server(app),
                conn,
            } if delay > 0.0 => Stack::Quic {
                endpoint,
                app: App::Server(app.with_app_delay(Duration::from_secs_f64(delay / 1e3))),
                conn,
            },
            other => other,
        }
    }

    /// Node `n`'s host counters at the end of a run that lasted `end_s`.
    pub(super) fn host_stats(&self, n: usize, end_s: f64) -> Option<HostStats> {
        let node = &self.nodes[n];
        let mut s = node.model.as_ref()?.stats.finished(end_s);
        if let Stack::Quic {
            app: App::Server(app),
            ..
        } = &node.stack
        {
            s.app_delayed = app.delayed;
        }
        Some(s)
    }
}
