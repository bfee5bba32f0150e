//! Careful Resume on real UDP (draft-ietf-tsvwg-careful-resume §4.1, §4.2): `quiclab
//! server --careful-resume` keeps a store of saved path parameters across connections,
//! keyed by the client's IP address (the Remote Endpoint as the server sees it). A
//! connection's last congestion window and minimum RTT are saved when it ends; a
//! later connection from the same address resumes from them (one at a time, within
//! the store's lifetime), and the saved set is deleted if it ended in Safe Retreat.

use crate::app::setup::QlogDir;
use quiclab_proto::cc::{CarefulResumePhase, SavedPathStore, StorePolicy};
use quiclab_proto::events::{Event, EventSink};
use quiclab_proto::{Endpoint, Instant, TransportConfig};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Store = Arc<Mutex<SavedPathStore<IpAddr>>>;

/// Installs the store on a server endpoint: each accepted connection gets the saved
/// parameters for its peer (if any) in its config, and an event sink that observes
/// its window and RTT for the next one (forwarding every event to the qlog sink).
pub fn install(endpoint: &mut Endpoint, qlog: QlogDir) {
    let base = endpoint.config().clone();
    let iw = 10 * u64::from(base.max_udp_payload_size);
    let store: Store = Arc::new(Mutex::new(SavedPathStore::new(StorePolicy::with_iw(iw))));
    let claims = store.clone();
    endpoint.set_config_factory(Box::new(move |remote, now| {
        let saved = claims.lock().ok()?.claim(&remote.ip(), now).ok()?;
        let mut cfg = TransportConfig::clone(&base);
        cfg.careful_resume.enabled = true;
        cfg.careful_resume.saved_cwnd_bytes = saved.cwnd;
        cfg.careful_resume.saved_rtt_ms = saved.rtt.as_secs_f64() * 1e3;
        cfg.validate().ok()?;
        Some(Arc::new(cfg))
    }));
    endpoint.set_sink_factory(Box::new(move |_, conn| {
        let resumed = conn
            .congestion_controller()
            .careful_resume_phase()
            .is_some();
        Some(Box::new(Observer {
            inner: qlog.sink_for(conn),
            store: store.clone(),
            key: conn.remote_address().ip(),
            resumed,
            cwnd: 0,
            min_rtt: Duration::ZERO,
            retreated: false,
            last: Instant::ZERO,
            done: false,
        }))
    }));
}

/// Watches one connection's events for what to save (draft §4.1 "Observing").
struct Observer {
    inner: Option<Box<dyn EventSink>>,
    store: Store,
    key: IpAddr,
    /// The connection claimed saved parameters (it runs Careful Resume).
    resumed: bool,
    cwnd: u64,
    min_rtt: Duration,
    retreated: bool,
    last: Instant,
    done: bool,
}

impl Observer {
    fn finish(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let Ok(mut store) = self.store.lock() else {
            return;
        };
        if self.resumed {
            if self.retreated {
                // draft §4.5 "Removing saved information".
                store.forget(&self.key);
            } else {
                store.release(&self.key);
            }
        }
        if !self.retreated {
            store.observe(self.key, self.last, self.cwnd, self.min_rtt);
        }
    }
}

impl EventSink for Observer {
    fn event(&mut self, now: Instant, event: &Event) {
        self.last = self.last.max(now);
        match event {
            Event::MetricsUpdated(m) => {
                if let Some(c) = m.congestion_window {
                    self.cwnd = c;
                }
                if let Some(r) = m.min_rtt {
                    self.min_rtt = r;
                }
            }
            Event::CarefulResumePhaseUpdated(u) if u.new == CarefulResumePhase::SafeRetreat => {
                self.retreated = true;
            }
            _ => {}
        }
        if let Some(s) = self.inner.as_mut() {
            s.event(now, event);
        }
        if matches!(event, Event::ConnectionClosed { .. }) {
            self.finish();
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.finish();
    }
}
