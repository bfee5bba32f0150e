//! Abandoning path 0 (draft-ietf-quic-multipath §3.4: "each endpoint can decide to
//! abandon a path" — any path, the handshake's included). Path 0's packet number space
//! is the connection's application-data space and its recovery the connection's own,
//! so abandoning it stops that space's sending, not the connection: nothing is sent
//! on path 0 afterwards, what was in flight on it is declared lost at once and goes
//! again on the other paths (RFC 9000 §13.3), its loss detection and pacing timers
//! are disarmed, and the control frames and acknowledgments it carried (ACK of its own
//! space as PATH_ACK for path 0, the other paths' PATH_ACKs, CIDs, PATH_ABANDON,
//! PATH_STATUS, flow control) go on the remaining path that carries them
//! (`multipath_carrier.rs`). Packets still arriving on path 0 are received and
//! acknowledged there (§3.4.2 "Handling PATH_ACK for Abandoned Paths").
//!
//! The last usable path: §3.4 answers a PATH_ABANDON "for the only open path" with
//! CONNECTION_CLOSE ("SHOULD send a CONNECTION_CLOSE frame and enter the closing
//! state"), which we do (NO_ERROR: the peer asked for it). Our own API refuses to
//! abandon the last usable path ([`PathSendError::LastPath`]): an application that
//! wants no path at all closes the connection, which says so to the peer; abandoning
//! would leave the peer to find out by the idle timeout.

use super::path_spaces::PathSendError;
use super::spaces::SpaceId;
use super::stats::tally;
use super::timers::Timer;
use super::Connection;
use crate::error::{TransportError, TransportErrorCode};
use crate::wire::PathId;

/// Application error code of the PATH_ABANDON for path 0 we send in answer to the
/// peer's (§4.2 leaves the value to the application).
const ABANDON_ANSWER: u64 = 0;

impl Connection {
    /// Whether a path other than `except` may still carry packets: path 0 unless
    /// abandoned, or a path above 0 not abandoned, validated, with a connection ID
    /// from the peer.
    pub(super) fn usable_path_besides(&self, except: PathId) -> bool {
        if except != PathId::INITIAL && !self.multipath.path0_abandoned {
            return true;
        }
        self.path_spaces.iter().any(|(id, s)| {
            id != except && !s.abandoned && s.validated && !self.path_cids.remote_ids(id).is_empty()
        })
    }

    /// Whether a path other than `except` is open (not abandoned; above 0: its space
    /// exists, validated or still being validated): a peer's PATH_ABANDON leaves the
    /// connection open while one is (§3.4: CONNECTION_CLOSE for "the only open path").
    pub(super) fn open_path_besides(&self, except: PathId) -> bool {
        (except != PathId::INITIAL && !self.multipath.path0_abandoned)
            || self
                .path_spaces
                .iter()
                .any(|(id, s)| id != except && !s.abandoned)
    }

    /// Our API's path 0 case of [`Connection::multipath_abandon_path`].
    pub(super) fn abandon_path0_checked(&mut self, error_code: u64) -> Result<(), PathSendError> {
        if !self.multipath.is_negotiated() || !self.handshake.confirmed {
            return Err(PathSendError::NotNegotiated);
        }
        if self.multipath.path0_abandoned {
            return Err(PathSendError::InvalidPathId);
        }
        if !self.usable_path_besides(PathId::INITIAL) {
            return Err(PathSendError::LastPath);
        }
        self.abandon_path0(error_code);
        Ok(())
    }

    /// PATH_ABANDON received for path 0 (§3.4): we abandon it too, answering with our
    /// own; when it was the only usable path, CONNECTION_CLOSE.
    pub(super) fn on_path0_abandon(&mut self) -> Result<(), TransportError> {
        if self.multipath.path0_abandoned {
            return Ok(());
        }
        if !self.open_path_besides(PathId::INITIAL) {
            return Err(only_path_abandoned());
        }
        self.abandon_path0(ABANDON_ANSWER);
        Ok(())
    }

    /// Path 0 is abandoned: see the module's description.
    pub(super) fn abandon_path0(&mut self, error_code: u64) {
        self.multipath.path0_abandoned = true;
        self.multipath.path0_abandon_pending = Some(error_code);
        if self.multipath.on_abandoned(PathId::INITIAL) {
            // §4.6: the peer may open another path in its place.
            self.update_path_limit();
        }
        self.path.responses.clear();
        self.spaces[SpaceId::Data as usize].probes = 0;
        let lost = self.path.recovery.take_all(SpaceId::Data);
        for p in &lost {
            tally(&mut self.stats.packets_lost, 1);
            self.requeue_lost(SpaceId::Data, &p.data);
        }
        self.timers.stop(Timer::LossDetection);
        self.timers.stop(Timer::Pacing);
        self.timers.stop(Timer::PathValidation);
    }
}

/// §3.4: the peer abandoned the only open path; the connection closes.
pub(super) fn only_path_abandoned() -> TransportError {
    TransportError::new(
        TransportErrorCode::NO_ERROR,
        "PATH_ABANDON for the only open path",
    )
}
