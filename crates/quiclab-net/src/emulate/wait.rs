//! The relays' wait (the UDP emulator's `emulate/relay.rs`, the shell's
//! `shell/relay.rs`): one poll over two sources, side 0 and side 1, and the [`Waker`]'s
//! timer, which sleeps until the next delivery is due or a source is readable.
//!
//! # Call contract
//! Register the two sources with [`Ready::new`]'s closure under [`SIDES`]' tokens; read
//! a side while `readable[side]` and clear it when a read would block (the poll is
//! edge-triggered); call [`Ready::wait`] only when neither side is readable, and
//! [`Ready::rest`] once per turn.

use super::wake::Waker;
use crate::error::{Context, Result};
use mio::{Events, Poll, Registry, Token};
use quiclab_proto::Instant;
use std::io::ErrorKind;
use std::time::Duration;

/// The poll tokens of side 0 and side 1 ([`super::wake::TIMER`] is the third).
pub(crate) const SIDES: [Token; 2] = [Token(0), Token(1)];

/// The poll, its events and which side has something to read.
pub(crate) struct Ready {
    poll: Poll,
    events: Events,
    waker: Waker,
    /// Set by an event, cleared by the reader when a read would block; both start set,
    /// as data may have arrived before registration.
    pub readable: [bool; 2],
}

impl Ready {
    /// A new poll: `register` registers the two sources under [`SIDES`]; then the waker.
    pub fn new(
        waker: Waker,
        register: impl FnOnce(&Registry) -> std::io::Result<()>,
    ) -> Result<Ready> {
        let poll = Poll::new().context("creating the event loop")?;
        register(poll.registry()).context("registering the relay's sources")?;
        waker.register(poll.registry())?;
        Ok(Ready {
            poll,
            events: Events::with_capacity(8),
            waker,
            readable: [true, true],
        })
    }

    /// The poll's registry (a relay that replaces a source registers the new one).
    pub fn registry(&self) -> &Registry {
        self.poll.registry()
    }

    /// How the relay sleeps, for the start-up log.
    pub fn note(&self) -> String {
        self.waker.note()
    }

    /// Rests a moment if the relay owes rest (`rest.rs`); once per loop turn.
    pub fn rest(&mut self) {
        self.waker.rest.pay();
    }

    /// Sleeps from `now` until `deadline` (at most `idle`; `None`: `idle`) or a source is
    /// readable; `what` names the sources in an error.
    pub fn wait(
        &mut self,
        now: Instant,
        deadline: Option<Instant>,
        idle: Duration,
        what: &str,
    ) -> Result<()> {
        let wait = deadline.map_or(idle, |d| d.saturating_duration_since(now).min(idle));
        if wait.is_zero() {
            return Ok(());
        }
        let timeout = self.waker.timeout(wait);
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("waiting for the {what}")),
        }
        for ev in self.events.iter() {
            match SIDES.iter().position(|&t| t == ev.token()) {
                Some(side) => self.readable[side] = true,
                None => self.waker.clear(),
            }
        }
        Ok(())
    }
}
