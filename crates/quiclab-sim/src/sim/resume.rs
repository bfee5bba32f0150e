//! Careful Resume from an earlier flow (`careful_resume.from_flow`, see
//! `scenario::resume_from`), mirroring what `quiclab server --careful-resume` saves on
//! real UDP (quiclab-cli `resume.rs`): the referenced flow's data sender is watched for
//! its congestion window and minimum RTT (draft-ietf-tsvwg-careful-resume §4.1
//! "Observing"), and when the later flow starts, once the referenced flow has ended
//! (its transfer completed or its sender's connection closed), its last values become
//! the later sender's saved_cwnd and saved_rtt.
//!
//! As on real UDP, the observation goes through a [`SavedPathStore`]: it is not saved
//! when the referenced connection ended in Safe Retreat (draft §4.5 "Removing saved
//! information"), when its cwnd is under four initial windows (draft §4.1), when it
//! has no RTT sample, or when it is older than the store's lifetime (draft §4.2); the
//! later flow then starts without Careful Resume, as a sender without saved
//! parameters does.

use super::{SimError, Simulation, Stack};
use crate::net::topology::derive_seed;
use crate::scenario::{ResumeFrom, Scenario, ScenarioError};
use quiclab_proto::cc::{CarefulResumePhase, SavedPathStore, StorePolicy};
use quiclab_proto::events::{Event, EventSink};
use quiclab_proto::{Endpoint, Instant};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What one sender connection has shown so far.
#[derive(Clone, Copy, Debug, Default)]
struct Observation {
    cwnd: u64,
    min_rtt: Duration,
    retreated: bool,
    closed_at: Option<Instant>,
}

type Slot = Arc<Mutex<Observation>>;

fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Observation> {
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every flow's reference (if any) and, for each referenced flow, its observation.
#[derive(Default)]
pub(super) struct Sources {
    from: Vec<Option<ResumeFrom>>,
    slots: Vec<Option<Slot>>,
}

impl Sources {
    /// Reads (validated) references from the scenario.
    pub(super) fn new(scenario: &Scenario, file: &str) -> Result<Self, ScenarioError> {
        let n = scenario.flows.len();
        let mut s = Sources {
            from: Vec::with_capacity(n),
            slots: vec![None; n],
        };
        for i in 0..n {
            let r = scenario.resume_from(i, file)?;
            if let Some(r) = r {
                s.slots[r.flow] = Some(Slot::default());
            }
            s.from.push(r);
        }
        Ok(s)
    }

    /// What watches flow `flow`'s `server` (else client) connection: its observation
    /// slot if a later flow resumes from this one's data sender, else nothing.
    pub(super) fn observer(&self, flow: usize, server: bool) -> Observe {
        let sender = self
            .from
            .iter()
            .flatten()
            .any(|r| r.flow == flow && r.server == server);
        Observe(self.slots[flow].clone().filter(|_| sender))
    }
}

/// Wraps the event sinks of one side of a flow (see [`Sources::observer`]).
pub(super) struct Observe(Option<Slot>);

impl Observe {
    /// `sink`, observed if this side is watched.
    pub(super) fn wrap(&self, sink: Box<dyn EventSink>) -> Box<dyn EventSink> {
        match &self.0 {
            Some(slot) => Box::new(Observer {
                inner: sink,
                slot: slot.clone(),
            }),
            None => sink,
        }
    }
}

/// Forwards every event to `inner` and notes what a later flow resumes from.
struct Observer {
    inner: Box<dyn EventSink>,
    slot: Slot,
}

impl EventSink for Observer {
    fn event(&mut self, now: Instant, event: &Event) {
        {
            let mut o = lock(&self.slot);
            match event {
                Event::MetricsUpdated(m) => {
                    if let Some(c) = m.congestion_window {
                        o.cwnd = c;
                    }
                    if let Some(r) = m.min_rtt {
                        o.min_rtt = r;
                    }
                }
                Event::CarefulResumePhaseUpdated(u) if u.new == CarefulResumePhase::SafeRetreat => {
                    o.retreated = true;
                }
                Event::ConnectionClosed { .. } => {
                    o.closed_at.get_or_insert(now);
                }
                _ => {}
            }
        }
        self.inner.event(now, event);
    }
}

impl Simulation {
    /// Before flow `i` connects: if it resumes from an earlier flow, gives its data
    /// sender the saved parameters observed there. Fails if that flow has not ended.
    pub(super) fn resume_before_start(&mut self, i: usize) -> Result<(), SimError> {
        let Some(r) = self.resume.from[i] else {
            return Ok(());
        };
        let now = self.now;
        let obs = self.resume.slots[r.flow].as_ref().map(|s| *lock(s));
        let obs = obs.unwrap_or_default();
        let Some(ended) = self.flows[r.flow].measure.done_at.or(obs.closed_at) else {
            return Err(SimError::ResumeSource {
                file: self.file.clone(),
                flow: self.scenario.flows[i].name.clone(),
                from: self.scenario.flows[r.flow].name.clone(),
                at: now,
            });
        };
        let mut cfg = self.scenario.transport(i, r.server, &self.file)?;
        let iw = 10 * u64::from(cfg.max_udp_payload_size);
        let mut store = SavedPathStore::new(StorePolicy::with_iw(iw));
        if !obs.retreated {
            store.observe((), ended, obs.cwnd, obs.min_rtt);
        }
        match store.claim(&(), now) {
            Ok(saved) if cfg.careful_resume.enabled => {
                cfg.careful_resume.saved_cwnd_bytes = saved.cwnd;
                cfg.careful_resume.saved_rtt_ms = saved.rtt.as_secs_f64() * 1e3;
            }
            _ => cfg.careful_resume.enabled = false,
        }
        let cfg = Arc::new(cfg);
        let f = &self.flows[i];
        if r.server {
            if let Stack::Quic { endpoint, .. } = &mut self.nodes[f.server_node].stack {
                endpoint.set_config_factory(Box::new(move |_, _| Some(cfg.clone())));
            }
        } else {
            // No connection exists on the client's endpoint before it starts, so a new
            // endpoint with the same seed is the same endpoint with the saved values.
            let seed = derive_seed(
                self.scenario.seed,
                &format!("flow:{}:client", self.scenario.flows[i].name),
            );
            if let Stack::Quic { endpoint, .. } = &mut self.nodes[f.client_node].stack {
                *endpoint = Endpoint::new(cfg, None, seed);
            }
        }
        Ok(())
    }
}
