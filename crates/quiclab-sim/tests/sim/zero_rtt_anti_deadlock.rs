//! A 0-RTT repeat connection whose server's first flight is lost must still complete
//! (RFC 9002 §6.2.2.1). The server resends its Initial when the client's ClientHello
//! comes again, but spends the rest of its amplification budget (3x what it received)
//! on 0.5-RTT data, so it cannot resend its Handshake packet and arms no PTO; the
//! client has the Handshake keys, nothing in flight but its 0-RTT packet, and no
//! Handshake ACK. Only the client's anti-deadlock PTO can move on. RFC 9002 A.8's
//! GetPtoTimeAndSpace skips the application space before the handshake is confirmed
//! and so armed nothing while the 0-RTT packet was in flight: with the seed below both
//! ends waited for the 30 s idle timeout (found by the quic-vs-tcp country plan).

use crate::country_path;

use country_path::{country, run, set};

fn flow(t: &mut toml::Table, i: usize) -> &mut toml::Table {
    t["flows"].as_array_mut().expect("flows")[i]
        .as_table_mut()
        .expect("a flow")
}

#[test]
fn zero_rtt_repeat_survives_a_lost_first_flight_at_the_amplification_limit() {
    // The India-like path of the plan (188 ms RTT, 8% loss on the download).
    let mut t = country(7_392_222_528_909_792_599, 94.0, 0.08, 313);
    for i in [1, 3] {
        set(
            flow(&mut t, i),
            &["workload", "size"],
            toml::Value::Integer(100_000),
        );
    }
    flow(&mut t, 1).insert("session_from".into(), "tcp-warm".into());
    flow(&mut t, 3).insert("session_from".into(), "quic-warm".into());
    set(
        flow(&mut t, 3),
        &["client", "zero_rtt"],
        toml::Value::Boolean(true),
    );
    let r = run(&t, "deadlock.toml");
    let quic = r
        .flows
        .iter()
        .find(|f| f.name == "quic")
        .expect("the quic flow");
    assert_eq!(quic.incomplete, None, "{:?}", quic.close);
    let ttlb = quic.ttlb_s.expect("the 0-RTT GET completes");
    // Without the anti-deadlock PTO the connection idled out at 30 s.
    assert!(ttlb < 10.0, "ttlb {ttlb} s");
}
