//! Record framing shared by every qlog event writer: JSON-SEQ records (RFC 7464) with
//! the draft's `time`, `name` and `data` members, and the transport error field that
//! both frames and `connection_closed` carry.

use super::json::Json;
use crate::ecn::{Ecn, EcnState};
use crate::error::TransportErrorCode;
use crate::events::KernelDrops;
use crate::time::Instant;

/// JSON-SEQ record separator (RFC 7464).
pub(super) const RS: u8 = 0x1e;

/// Opens a record up to the inside of its `data` object.
pub(super) fn begin<'a>(buf: &'a mut Vec<u8>, now: Instant, name: &str) -> Json<'a> {
    let mut j = Json::new(buf);
    j.raw(&[RS]).begin_obj();
    j.key("time").ms(now.as_nanos());
    j.key("name").lit(name);
    j.key("data").begin_obj();
    j
}

/// Closes `data`, the record, and the line.
pub(super) fn end(mut j: Json<'_>) {
    j.end_obj().end_obj().raw(b"\n");
}

/// `key` (`error` or `connection_error`) and, for codes without a name, `error_code`.
pub(super) fn write_transport_error(j: &mut Json<'_>, key: &str, code: u64) {
    let name = TransportErrorCode(code).name();
    match name {
        "crypto_error" => {
            j.key(key);
            j.lit(&format!("crypto_error_0x{code:03x}"));
        }
        "unknown" => {
            j.key(key).lit("unknown");
            j.key("error_code").u64(code);
        }
        name => {
            j.key(key).lit(name);
        }
    }
}

/// `quiclab:kernel_drops`: a driver's socket reading (a private `quiclab:` event, not
/// in the draft; the header's `event_schemas` is left as it is, so traces without the
/// event stay byte-identical). `drops` is cumulative for the socket.
pub(super) fn kernel_drops(buf: &mut Vec<u8>, now: Instant, k: &KernelDrops) {
    let mut j = begin(buf, now, "quiclab:kernel_drops");
    j.key("drops").u64(k.drops);
    j.key("recv_buffer").u64(k.recv_buffer);
    j.key("send_buffer").u64(k.send_buffer);
    j.key("trigger").lit(k.trigger.name());
    end(j);
}

/// qlog quic-events `ECN`: the codepoint's name.
fn ecn_name(ecn: Ecn) -> &'static str {
    match ecn {
        Ecn::NotEct => "Not-ECT",
        Ecn::Ect1 => "ECT(1)",
        Ecn::Ect0 => "ECT(0)",
        Ecn::Ce => "CE",
    }
}

/// `quic:ecn_state_updated` (qlog quic-events, RFC 9000 Appendix A.4's states).
pub(super) fn ecn_state_updated(
    buf: &mut Vec<u8>,
    now: Instant,
    old: Option<EcnState>,
    new: EcnState,
) {
    let mut j = begin(buf, now, "quic:ecn_state_updated");
    if let Some(old) = old {
        j.key("old").lit(old.name());
    }
    j.key("new").lit(new.name());
    end(j);
}

/// `quic:udp_datagrams_received` for one datagram: its size and ECN codepoint.
pub(super) fn datagram_received(buf: &mut Vec<u8>, now: Instant, size: usize, ecn: Ecn) {
    let mut j = begin(buf, now, "quic:udp_datagrams_received");
    j.key("count").u64(1);
    j.key("raw").begin_arr().begin_obj();
    j.key("length").u64(size as u64);
    j.end_obj().end_arr();
    j.key("ecn").begin_arr().lit(ecn_name(ecn)).end_arr();
    end(j);
}
