//! Closing a multipath connection (draft-ietf-quic-multipath "Connection Closure"):
//! RFC 9000 §10.2's closing and draining states "SHOULD instead persist for at least
//! three times the largest PTO among all paths" (`src/connection/close.rs`,
//! `multipath_pto.rs`), not path 0's alone.

use crate::misbehaving::run_for;
use crate::multipath::config;
use crate::multipath_key_update::{slow_second_path, SLOW_PTO};

use quiclab_proto::Instant;
use std::time::Duration;

/// Path 0 has a 20 ms RTT, path 1 200 ms: the client's closing period and the server's
/// draining period both last at least 3 × path 1's PTO (path 0's would end them after
/// about 200 ms). Then both are drained.
#[test]
fn closing_and_draining_last_three_times_the_largest_pto_among_paths() {
    let mut p = slow_second_path(config(Some(3)), config(Some(3)), 601);
    let t0 = p.now;
    p.client_conn().close(t0, 0, "done");
    let (mut client_done, mut server_done): (Option<Instant>, Option<Instant>) = (None, None);
    for _ in 0..600 {
        run_for(&mut p, Duration::from_millis(5));
        if client_done.is_none() && p.client_conn().is_drained() {
            client_done = Some(p.now);
        }
        if server_done.is_none() && p.server_conn().unwrap().is_drained() {
            server_done = Some(p.now);
        }
    }
    let client = client_done.expect("the client's closing period ends") - t0;
    let server = server_done.expect("the server's draining period ends") - t0;
    assert!(p.server_conn().unwrap().is_closed());
    assert!(client >= SLOW_PTO * 3, "closing lasted {client:?}");
    // The server entered draining when the CONNECTION_CLOSE arrived, 10 ms or more
    // after t0.
    assert!(server >= SLOW_PTO * 3, "draining lasted {server:?}");
    // Not unbounded either: well under the idle timeout.
    assert!(client < Duration::from_secs(3) && server < Duration::from_secs(3));
}
