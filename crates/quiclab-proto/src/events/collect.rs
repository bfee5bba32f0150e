//! Generic sinks: [`VecSink`] keeps every event (tests, metric collectors that post-
//! process), [`SharedSink`] lets a driver keep a handle to a sink it gave away.

use super::{Event, EventSink, FrameDetail};
use crate::time::Instant;
use std::sync::{Arc, Mutex, MutexGuard};

/// Collects `(time, event)` pairs in order.
#[derive(Clone, Debug, Default)]
pub struct VecSink {
    pub events: Vec<(Instant, Event)>,
}

impl VecSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the events collected so far, leaving the sink empty.
    pub fn take(&mut self) -> Vec<(Instant, Event)> {
        std::mem::take(&mut self.events)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl EventSink for VecSink {
    fn event(&mut self, now: Instant, event: &Event) {
        self.events.push((now, event.clone()));
    }
}

/// A sink behind `Arc<Mutex<_>>`: clone it, give one clone to a connection, and read
/// the other. Events are forwarded under the lock.
#[derive(Debug, Default)]
pub struct SharedSink<S>(Arc<Mutex<S>>);

impl<S> Clone for SharedSink<S> {
    fn clone(&self) -> Self {
        SharedSink(Arc::clone(&self.0))
    }
}

impl<S> SharedSink<S> {
    pub fn new(sink: S) -> Self {
        SharedSink(Arc::new(Mutex::new(sink)))
    }

    /// Locks the sink. A panic in another holder does not make it unusable: the data
    /// of a sink stays meaningful after a poisoned lock.
    pub fn lock(&self) -> MutexGuard<'_, S> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The sink, if this is the last handle.
    pub fn try_unwrap(self) -> Result<S, Self> {
        match Arc::try_unwrap(self.0) {
            Ok(m) => Ok(m.into_inner().unwrap_or_else(|e| e.into_inner())),
            Err(arc) => Err(SharedSink(arc)),
        }
    }
}

impl<S: EventSink> EventSink for SharedSink<S> {
    fn event(&mut self, now: Instant, event: &Event) {
        self.lock().event(now, event);
    }

    fn frame_detail(&self) -> FrameDetail {
        self.lock().frame_detail()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ConnectionState;

    #[test]
    fn shared_vec_sink_collects() {
        let handle = SharedSink::new(VecSink::new());
        let mut given: Box<dyn EventSink> = Box::new(handle.clone());
        let ev = Event::ConnectionStateUpdated {
            new: ConnectionState::Attempted,
        };
        given.event(Instant::from_millis(3), &ev);
        assert_eq!(handle.lock().events, vec![(Instant::from_millis(3), ev)]);
        drop(given);
        assert_eq!(handle.try_unwrap().ok().map(|s| s.len()), Some(1));
    }
}
