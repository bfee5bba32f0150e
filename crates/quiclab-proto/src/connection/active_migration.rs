//! A client's active migration to a new local address (RFC 9000 §9.2): a fresh
//! connection ID (§9.5), path validation on the new path (§8.2), congestion state
//! reset unless only the port changed (§9.4), and a return to the old address if the
//! new path fails validation.

use super::migration_state::{MigrateError, PreviousPath};
use super::path_validation::Validation;
use super::Connection;
use crate::events::{Event, MigrationPhase};
use crate::time::Instant;
use crate::wire::Side;
use std::net::SocketAddr;

impl Connection {
    /// Moves the connection to the local address `local`: from now on its datagrams
    /// say [`Transmit::source`](crate::Transmit::source) `Some(local)`, to a connection
    /// ID of the server's never used before, and a PATH_CHALLENGE validates the new
    /// path; if validation fails (RFC 9000 §8.2.4), the connection returns to the
    /// previous address. The driver binds `local` and sends from it.
    ///
    /// `old_local` is the address the connection used so far (the driver's default
    /// socket's, when it never migrated): it is where the connection returns to, and
    /// tells a port-only change (congestion state kept, §9.4) from another.
    ///
    /// Refused (nothing changes) for a server, before the handshake is confirmed
    /// (§9), once closed, when the server sent disable_active_migration (§9; unless
    /// the connection moved to the server's preferred address, §18.2), while the
    /// server's preferred address is being validated (§9.6.1), or when the server
    /// issued no unused connection ID (§9.5).
    pub fn migrate(
        &mut self,
        now: Instant,
        old_local: SocketAddr,
        local: SocketAddr,
    ) -> Result<(), MigrateError> {
        self.check_migration(old_local, local)?;
        if self.cids.switch_remote().is_none() {
            return Err(MigrateError::NoConnectionId);
        }
        let current = self.migration.local.unwrap_or(old_local);
        let timeout = self.path_validation_timeout();
        // RFC 9000 §9.4: new congestion state unless only the port changed.
        let saved = (current.ip() != local.ip()).then(|| self.fresh_congestion(true));
        // The last validated path is where a failed validation returns to: the one we
        // leave, unless it was itself not yet validated.
        if self.migration.validation.is_none() {
            self.migration.previous = Some(PreviousPath {
                remote: self.path.remote,
                local: Some(current),
                congestion: saved,
            });
        }
        self.migration.local = Some(local);
        let token = self.rng.next_u64().to_be_bytes();
        self.migration.validation = Some(Validation::new(token, now, timeout));
        self.migration.stats.migrations = self.migration.stats.migrations.saturating_add(1);
        if self.logging() {
            let remote = self.path.remote;
            let tuple_id = self.migration.tuple_seq.saturating_add(1);
            self.emit(
                now,
                Event::MigrationStateUpdated {
                    new: MigrationPhase::MigrationStarted,
                    remote,
                },
            );
            let local = Some(local);
            self.emit(
                now,
                Event::TupleAssigned {
                    tuple_id,
                    remote,
                    local,
                },
            );
        }
        self.migration.tuple_seq = self.migration.tuple_seq.saturating_add(1);
        self.arm_path_validation_timer();
        self.set_loss_detection_timer(now);
        Ok(())
    }

    fn check_migration(
        &self,
        old_local: SocketAddr,
        local: SocketAddr,
    ) -> Result<(), MigrateError> {
        if self.side != Side::Client {
            return Err(MigrateError::NotClient);
        }
        if self.is_closed() {
            return Err(MigrateError::Closed);
        }
        if !self.handshake.confirmed {
            return Err(MigrateError::HandshakeNotConfirmed);
        }
        if self.migration.preferred.is_some() {
            return Err(MigrateError::PreferredAddressPending);
        }
        // RFC 9000 §18.2: not once the client acted on a preferred address.
        if self
            .params
            .peer()
            .is_some_and(|p| p.disable_active_migration)
            && !self.migration.on_preferred
        {
            return Err(MigrateError::DisabledByPeer);
        }
        if self.migration.local.unwrap_or(old_local) == local {
            return Err(MigrateError::SameAddress);
        }
        Ok(())
    }
}
