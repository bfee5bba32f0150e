//! ECN glue (RFC 9000 §13.4): what the connection reports of its `ecn_state.rs` part
//! and the qlog events it logs. Sending (`send.rs`), counting (`recv.rs`) and the
//! ACK's validation and CE signal (`loss.rs`) call the part directly.

use super::ecn_state::EcnReport;
use super::Connection;
use crate::ecn::Ecn;
use crate::events::Event;
use crate::time::Instant;

impl Connection {
    /// What the connection knows of ECN: validation state, the codepoint it sends, the
    /// counts it reports and the peer's.
    pub fn ecn(&self) -> EcnReport {
        self.ecn.report()
    }

    /// Logs `ecn_state_updated` for each state change not yet logged.
    pub(super) fn log_ecn_changes(&mut self, now: Instant) {
        while let Some((old, new)) = self.ecn.take_change() {
            if self.logging() {
                self.emit(now, Event::EcnStateUpdated { old, new });
            }
        }
    }

    /// Logs `udp_datagrams_received` with the datagram's codepoint when ECN is in play
    /// (configured, or a marked datagram arrived), so that traces of connections
    /// without ECN are unchanged.
    pub(super) fn log_datagram_ecn(&mut self, now: Instant, size: usize, ecn: Ecn) {
        if self.logging() && (!self.config.ecn.is_off() || ecn.is_ect()) {
            self.emit(now, Event::DatagramReceived { size, ecn });
        }
    }
}
