//! A download over the pair harness, shared by the path tests: the client asks on one
//! stream, the server answers with seeded bytes, the client checks them byte for byte.

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Connection, DetRng, Dir, StreamError, StreamId};
use std::time::Duration;

/// A download: the client asks on one stream, the server answers with `data`.
pub struct Download {
    pub data: Vec<u8>,
    sent: usize,
    pub received: Vec<u8>,
    stream: Option<StreamId>,
    pub done: bool,
}

impl Download {
    pub fn new(seed: u64, len: usize) -> Self {
        let mut data = vec![0u8; len];
        DetRng::new(seed).fill(&mut data);
        Download {
            data,
            sent: 0,
            received: Vec::new(),
            stream: None,
            done: false,
        }
    }

    pub fn drive(&mut self, p: &mut Pair) {
        if self.stream.is_none() {
            let c = p.client_conn();
            let id = c.open_stream(Dir::Bi).expect("stream");
            c.write(id, b"GET").unwrap();
            c.finish(id).unwrap();
            self.stream = Some(id);
        }
        let id = self.stream.unwrap();
        if let Some(s) = p.server_conn() {
            if s.accept_stream(Dir::Bi).is_some() || self.sent > 0 {
                push(s, id, &self.data, &mut self.sent);
            }
        }
        self.done |= drain_stream(p.client_conn(), id, &mut self.received);
    }
}

fn push(conn: &mut Connection, id: StreamId, data: &[u8], sent: &mut usize) {
    while *sent < data.len() {
        match conn.write(id, &data[*sent..]) {
            Ok(n) => *sent += n,
            Err(StreamError::Blocked) => return,
            Err(e) => panic!("write: {e}"),
        }
    }
    if *sent == data.len() {
        conn.finish(id).unwrap();
        *sent = usize::MAX;
    }
}

/// Runs the download to the end, calling `at_ms` once when the virtual time passes
/// `ms` after the start.
pub fn run_download(p: &mut Pair, d: &mut Download, ms: u64, mut at_ms: impl FnMut(&mut Pair)) {
    let start = p.now;
    let mut fired = false;
    p.run_until(start + Duration::from_secs(120), |p| {
        if !fired && p.now >= start + Duration::from_millis(ms) {
            fired = true;
            at_ms(p);
        }
        d.drive(p);
        d.done
    })
    .expect("download completes");
    assert_eq!(d.received, d.data, "byte-exact");
}
