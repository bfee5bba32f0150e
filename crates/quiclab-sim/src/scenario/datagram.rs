//! Checks of a `datagram` workload (`workload/datagram.rs`): a QUIC flow whose both
//! sides offer RFC 9221 DATAGRAM frames, with a rate, size and duration the simulator
//! can carry.

use super::validate::Check;
use super::{Flow, Scenario, ScenarioError, Workload};

/// Bytes of the sequence number and send-time stamp that start each payload of a
/// `datagram` flow, so its smallest size.
pub const STAMP_LEN: usize = 16;
/// The highest rate, datagrams per second (a 100 Gbit/s link of minimum-size ones).
pub const MAX_DATAGRAM_RATE_PPS: f64 = 1e7;
/// The most datagrams one flow may send (its receiver keeps each one's delay).
pub const MAX_DATAGRAMS: f64 = 1e7;
/// RFC 9221 §3: a DATAGRAM payload fits one QUIC packet, itself one UDP datagram.
const MAX_DATAGRAM_SIZE: u64 = 65_527;

impl Scenario {
    pub(super) fn check_datagram_flow(
        &self,
        c: Check,
        i: usize,
        f: &Flow,
    ) -> Result<(), ScenarioError> {
        let Workload::Datagram {
            rate_pps,
            size,
            duration_s,
        } = f.workload
        else {
            return Ok(());
        };
        let key = format!("flows[{i}]");
        if !f.transport.is_quic() {
            return c.bad(format!("{key}.transport"), "a datagram flow runs over QUIC");
        }
        if !(rate_pps.is_finite() && rate_pps > 0.0 && rate_pps <= MAX_DATAGRAM_RATE_PPS) {
            return c.bad(
                format!("{key}.workload.rate_pps"),
                format!("must be above 0 and at most {MAX_DATAGRAM_RATE_PPS}"),
            );
        }
        if !(STAMP_LEN as u64..=MAX_DATAGRAM_SIZE).contains(&size) {
            return c.bad(
                format!("{key}.workload.size"),
                format!("must be {STAMP_LEN} (sequence number and send time) to {MAX_DATAGRAM_SIZE} bytes"),
            );
        }
        c.seconds(format!("{key}.workload.duration_s"), duration_s, true)?;
        if rate_pps * duration_s > MAX_DATAGRAMS {
            return c.bad(
                format!("{key}.workload"),
                format!("rate_pps x duration_s is at most {MAX_DATAGRAMS} datagrams"),
            );
        }
        for (server, side) in [(false, "client"), (true, "server")] {
            let t = self.transport(i, server, c.file)?;
            if t.max_datagram_frame_size.unwrap_or(0) == 0 {
                return c.bad(
                    format!("{key}.{side}.max_datagram_frame_size"),
                    "a datagram flow needs it on both sides (RFC 9221 §3; 65535 accepts any size)",
                );
            }
        }
        Ok(())
    }
}
