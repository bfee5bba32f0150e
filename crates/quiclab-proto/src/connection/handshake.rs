//! Driving TLS (RFC 9001 §4): feeding CRYPTO data in, collecting handshake bytes and
//! key changes, validating the peer's transport parameters, completing and confirming
//! the handshake, and discarding keys.

use super::spaces::SpaceId;
use super::{Connection, ConnectionEvent, EndpointEvent};
use crate::crypto::initial::initial_keys;
use crate::crypto::KeyChange;
use crate::error::TransportError;
use crate::events::{ConnectionState, Event, Owner};
use crate::time::Instant;
use crate::wire::{ConnectionId, Side, TransportParameters};
use std::time::Duration;

impl Connection {
    pub(super) fn install_initial_keys(&mut self, client_dcid: ConnectionId) {
        self.spaces[SpaceId::Initial as usize].keys =
            Some(initial_keys(self.versions.current, &client_dcid, self.side));
    }

    /// Handles a CRYPTO frame received in `space` (RFC 9001 §4.1.3).
    pub(super) fn on_crypto_frame(
        &mut self,
        now: Instant,
        space: SpaceId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), TransportError> {
        let limit = self.crypto_limit(space);
        let new_data = self.spaces[space as usize]
            .crypto_recv
            .insert(offset, data, limit)?;
        // RFC 9369 §4.1: CRYPTO data from the server in our version settles it.
        self.versions.settled = true;
        if !new_data {
            // RFC 9002 §6.2.3: the peer repeats CRYPTO data we have, so it probably
            // misses ours (or our ACK of it): resend ours without waiting for the PTO.
            self.speed_up_handshake(now, space);
        }
        if self.side == Side::Server && space == SpaceId::Initial {
            // Certificate on a remote store / signing: TLS sees the ClientHello (and
            // all later CRYPTO data, to keep order) only at the deadline.
            self.handshake.hold.on_first_initial_crypto(
                now,
                &self.config.handshake,
                &mut self.timers,
            );
        }
        if self.handshake.hold.is_holding(&self.timers) {
            return Ok(());
        }
        self.feed_tls(now, space)?;
        self.drive_tls(now)
    }

    /// Gives `space`'s contiguous received CRYPTO data to TLS.
    fn feed_tls(&mut self, now: Instant, space: SpaceId) -> Result<(), TransportError> {
        let mut buf = std::mem::take(&mut self.scratch.bytes);
        buf.clear();
        self.spaces[space as usize]
            .crypto_recv
            .take_contiguous(&mut buf);
        let res = if buf.is_empty() {
            Ok(())
        } else {
            self.tls.read_handshake(&buf, now)
        };
        self.scratch.bytes = buf;
        res
    }

    /// The held handshake's deadline came: TLS reads the held CRYPTO data and writes
    /// the server's first flight (the ACK of the client's Initial coalesced with the
    /// ServerHello under WFC). Does nothing before the deadline, or (with instant ACK) before the instant ACK
    /// left, so it goes in its own packet even when the hold is zero.
    pub(super) fn release_handshake_hold(&mut self, now: Instant) -> Result<(), TransportError> {
        if !self.handshake.hold.try_release(now, &mut self.timers) {
            return Ok(());
        }
        for space in SpaceId::ALL {
            self.feed_tls(now, space)?;
        }
        self.drive_tls(now)
    }

    /// WFC server holding the ClientHello: its Initial ACK waits for the ServerHello
    /// (see [`super::server_hold::ServerHold::holds_ack`]).
    pub(super) fn initial_ack_held(&self, space: SpaceId) -> bool {
        self.handshake.hold.holds_ack(space, &self.timers)
    }

    /// Collects TLS output and key changes; completes the handshake when TLS is done.
    pub(super) fn drive_tls(&mut self, now: Instant) -> Result<(), TransportError> {
        loop {
            let mut out = Vec::new();
            let change = self.tls.write_handshake(&mut out, now)?;
            if !out.is_empty() {
                self.spaces[self.handshake.tls_write_space as usize]
                    .crypto_send
                    .push(&out);
            }
            match change {
                None if out.is_empty() => break,
                None => {}
                Some(KeyChange::Handshake { keys }) => {
                    self.spaces[SpaceId::Handshake as usize].keys = Some(keys);
                    self.handshake.tls_write_space = SpaceId::Handshake;
                    self.log_keys(now, SpaceId::Handshake);
                }
                Some(KeyChange::OneRtt { keys, next }) => {
                    self.spaces[SpaceId::Data as usize].keys = Some(keys);
                    self.key_update.install(next);
                    self.handshake.tls_write_space = SpaceId::Data;
                    self.log_keys(now, SpaceId::Data);
                }
            }
        }
        if self.params.peer().is_none() {
            if let Some(raw) = self.tls.peer_transport_parameters() {
                let params = TransportParameters::decode(raw, self.side.peer())?;
                self.apply_peer_params(now, params)?;
            }
        }
        self.poll_zero_rtt_keys();
        if !self.handshake.complete && !self.tls.is_handshaking() {
            self.on_handshake_complete(now);
            self.finish_zero_rtt(now)?;
        }
        if self.handshake.complete {
            // Server: rustls has nothing more to do once its tickets were taken above.
            self.tls.release();
        }
        Ok(())
    }

    fn log_keys(&mut self, now: Instant, space: SpaceId) {
        if self.logging() {
            let key = space.key_type();
            self.emit(
                now,
                Event::KeyUpdated {
                    key,
                    owner: Owner::Local,
                },
            );
            self.emit(
                now,
                Event::KeyUpdated {
                    key,
                    owner: Owner::Remote,
                },
            );
        }
    }

    /// RFC 9000 §7.3-7.4: check the peer's parameters, then adopt its limits.
    fn apply_peer_params(
        &mut self,
        now: Instant,
        p: TransportParameters,
    ) -> Result<(), TransportError> {
        let tp_err = TransportError::transport_parameter;
        self.check_peer_version_information(now, &p)?;
        if p.initial_source_connection_id != Some(self.cids.remote_cid()) {
            return Err(tp_err(
                "initial_source_connection_id does not match the peer's Source Connection ID",
            ));
        }
        if self.side == Side::Client {
            self.check_retry_params(&p)?;
            if let Some(t) = p.stateless_reset_token {
                self.cids.set_initial_remote_reset_token(t);
            }
            self.accept_preferred_address(&p)?;
        }
        // RFC 9000 §10.1: the effective idle timeout is the minimum of the non-zero values.
        self.timers.negotiate_idle(now, p.max_idle_timeout);
        self.streams.apply_peer_params(&p);
        self.stats.ack_frequency_active =
            self.config.min_ack_delay_us.is_some() && p.min_ack_delay.is_some();
        self.negotiate_multipath(&p)?;
        if self.logging() {
            let alpn = self
                .tls
                .alpn()
                .map(|a| String::from_utf8_lossy(a).into_owned());
            self.emit(
                now,
                Event::ParametersSet {
                    owner: Owner::Remote,
                    params: Box::new(p.clone()),
                    alpn,
                    tls_cipher: self.cipher_suite().map(|s| format!("{s:?}")),
                    resumption: self.tls_resumption(),
                },
            );
        }
        self.params.set_peer(p);
        Ok(())
    }

    /// The peer's max_ack_delay (RFC 9002 §6.2.1 uses it in the PTO; §5.3 caps ACK
    /// delays with it): the advertised value or our newest acknowledged ACK_FREQUENCY
    /// request, raised to any request still in flight (ack-frequency §6) since the peer
    /// may already apply it.
    pub(super) fn peer_max_ack_delay(&self) -> Duration {
        let advertised = self.peer_advertised_max_ack_delay();
        self.ack_frequency.sender.peer_max_ack_delay(advertised)
    }

    /// The max_ack_delay of the peer's transport parameters (RFC 9000 §18.2: 25 ms
    /// when absent or not yet known).
    pub(super) fn peer_advertised_max_ack_delay(&self) -> Duration {
        self.params.peer_max_ack_delay()
    }

    /// The peer's ack_delay_exponent, to decode its ACK Delay fields.
    pub(super) fn peer_ack_delay_exponent(&self) -> u64 {
        self.params.peer_ack_delay_exponent()
    }

    fn on_handshake_complete(&mut self, now: Instant) {
        self.handshake.complete = true;
        self.timers.stop(super::timers::Timer::Handshake);
        self.lifecycle.on_established();
        self.stats.handshake_completed_at = Some(now);
        self.outbox.push_event(ConnectionEvent::HandshakeCompleted);
        self.set_state_event(now, ConnectionState::HandshakeComplete);
        if self.side == Side::Server {
            // RFC 9001 §4.1.2: the server's handshake is confirmed when it completes.
            self.handshake.done_pending = true;
            self.confirm_handshake(now);
        }
        self.issue_connection_ids();
    }

    /// Issues our connection IDs up to the smaller of the peer's
    /// active_connection_id_limit and ours (RFC 9000 §5.1.1), telling the endpoint.
    pub(super) fn issue_connection_ids(&mut self) {
        let limit = self.params.peer_active_connection_id_limit();
        let limit = limit.min(self.config.active_connection_id_limit);
        for cid in self.cids.issue(&mut self.rng, limit) {
            self.outbox
                .push_endpoint_event(EndpointEvent::NewConnectionId(cid));
        }
        self.issue_path_connection_ids();
    }

    /// RFC 9001 §4.1.2 / §4.9.2: confirmation discards the Handshake keys.
    pub(super) fn confirm_handshake(&mut self, now: Instant) {
        if self.handshake.confirmed {
            return;
        }
        self.handshake.confirmed = true;
        self.handshake.peer_validated_address = true;
        self.stats.handshake_confirmed_at = Some(now);
        self.outbox.push_event(ConnectionEvent::HandshakeConfirmed);
        self.set_state_event(now, ConnectionState::HandshakeConfirmed);
        self.discard_space(now, SpaceId::Handshake);
        // RFC 9000 §9.6.1: a client validates the server's preferred address now.
        self.start_preferred_probe(now);
    }

    /// Drops a space's keys and the packets in flight there (RFC 9002 §6.4, A.11).
    pub(super) fn discard_space(&mut self, now: Instant, space: SpaceId) {
        let sp = &mut self.spaces[space as usize];
        if sp.discarded {
            return;
        }
        sp.discarded = true;
        sp.keys = None;
        // Nothing more is read here: free what waited for reassembly.
        sp.crypto_recv = Default::default();
        // No ACK is built here again: free the range list kept for the next one.
        sp.acks.on_space_discarded();
        sp.probes = 0;
        // RFC 9002 A.11 OnPacketNumberSpaceDiscarded (the PTO backoff restarts).
        self.path.recovery.discard_space(space);
        self.ecn.on_space_discarded(space);
        if self.logging() {
            self.emit(
                now,
                Event::KeyDiscarded {
                    key: space.key_type(),
                },
            );
        }
        self.set_loss_detection_timer(now);
    }
}
