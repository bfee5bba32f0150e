//! The server's hold on the ClientHello for the instant-ACK study (IMC '24, seed 000;
//! config `handshake`): TLS sees the client's first flight only after a certificate
//! and signing delay, and, with instant ACK (IACK), the client's Initial is
//! acknowledged at once in its own packet before that; without it (WFC), the ACK waits
//! to be coalesced with the ServerHello.
//!
//! The deadline is [`Timer::ServerHold`] in the connection's timer table, armed exactly
//! while the hold lasts; this type keeps the rest and answers the questions the
//! receive, send and timeout paths ask, so none of them needs the config's details.

use super::spaces::SpaceId;
use super::timers::{Timer, TimerTable};
use crate::config::HandshakeConfig;
use crate::time::Instant;

/// Server: the hold's state besides its deadline. A client's never starts.
#[derive(Clone, Debug)]
pub(super) struct ServerHold {
    /// Config `handshake.instant_ack`.
    instant_ack: bool,
    /// The hold decision was taken (on the first Initial CRYPTO frame).
    started: bool,
    /// A PING goes with the instant ACK (config `handshake.instant_ack_ping`).
    ping_pending: bool,
    /// The instant ACK was sent (the hold ends only after it).
    iack_sent: bool,
}

impl ServerHold {
    pub fn new(config: &HandshakeConfig) -> Self {
        ServerHold {
            instant_ack: config.instant_ack,
            started: false,
            ping_pending: false,
            iack_sent: false,
        }
    }

    /// Server, CRYPTO data in an Initial: the first time, decide whether to hold the
    /// ClientHello (certificate on a remote store, signing; or IACK, which holds even
    /// with no delay so the instant ACK leaves first) and arm the deadline.
    pub fn on_first_initial_crypto(
        &mut self,
        now: Instant,
        config: &HandshakeConfig,
        timers: &mut TimerTable,
    ) {
        if self.started {
            return;
        }
        self.started = true;
        let hold = config.hold();
        if config.instant_ack || !hold.is_zero() {
            timers.set(Timer::ServerHold, now + hold);
            self.ping_pending = config.instant_ack && config.instant_ack_ping;
        }
    }

    /// Whether TLS is kept from the received CRYPTO data (all of it, to keep order).
    pub fn is_holding(&self, timers: &TimerTable) -> bool {
        timers.is_set(Timer::ServerHold)
    }

    /// Ends the hold if its deadline came and (with instant ACK) the instant ACK left,
    /// so it goes in its own packet even when the hold is zero. Returns whether TLS may
    /// now read the held data.
    pub fn try_release(&mut self, now: Instant, timers: &mut TimerTable) -> bool {
        if timers.get(Timer::ServerHold).is_none_or(|t| now < t)
            || (self.instant_ack && !self.iack_sent)
        {
            return false;
        }
        timers.stop(Timer::ServerHold);
        true
    }

    /// WFC server holding the ClientHello: its ACK waits to be coalesced with the
    /// ServerHello instead of going out alone (RFC 9000 §13.2.1 lets Initial ACKs be
    /// sent at once, it does not require a separate packet).
    pub fn holds_ack(&self, space: SpaceId, timers: &TimerTable) -> bool {
        space == SpaceId::Initial && self.is_holding(timers) && !self.instant_ack
    }

    /// An ACK went out in an Initial packet: during the hold, that is the instant ACK.
    pub fn on_initial_ack_sent(&mut self, timers: &TimerTable) {
        if self.is_holding(timers) {
            self.iack_sent = true;
        }
    }

    /// Whether a PING is to go with the instant ACK.
    pub fn ping_pending(&self) -> bool {
        self.ping_pending
    }

    /// The instant ACK's PING was written.
    pub fn on_ping_sent(&mut self) {
        self.ping_pending = false;
    }
}
