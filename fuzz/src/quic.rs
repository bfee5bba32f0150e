//! Shared QUIC setup: TLS configs made once per process (certificate generation is the
//! slowest part of a pair), and a seeded `testing` pair run until both sides have
//! confirmed the handshake.

use quiclab_proto::testing::{LinkConfig, Pair, PairTls, ALPN};
use quiclab_proto::tls::{CertType, ServerVerification, TlsChoices};
use quiclab_proto::{tls, Connection, Instant, TransportConfig};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

type Configs = (Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>);

/// Client and server TLS configs with one seeded self-signed Ed25519 certificate.
pub fn tls_configs() -> Configs {
    static CONFIGS: OnceLock<Configs> = OnceLock::new();
    CONFIGS
        .get_or_init(|| {
            let names = ["localhost".to_string()];
            let identity = tls::self_signed_as(&names, 7, 0, CertType::default());
            let roots = vec![identity.chain[0].clone()];
            let choices = TlsChoices::default();
            let server = tls::server_config_with(identity, &[ALPN.to_vec()], None, &choices)
                .expect("a self-signed identity is valid");
            let client = tls::client_config_with(
                ServerVerification::Roots(roots),
                &[ALPN.to_vec()],
                None,
                &choices,
            );
            (client, server)
        })
        .clone()
}

/// The seeded `testing` pair the targets start from (10 ms each way, no loss), before
/// its handshake.
pub fn new_pair(config: &TransportConfig) -> Pair {
    let link = LinkConfig::delay(Duration::from_millis(10));
    let tls = PairTls {
        configs: Some(tls_configs()),
        ..PairTls::default()
    };
    Pair::with_tls(config.clone(), config.clone(), [link.clone(), link], 1, tls)
}

/// A pair whose handshake both sides have confirmed, the same for every call with the
/// same config: the fuzz input starts from there.
pub fn established_pair(config: &TransportConfig) -> Pair {
    let mut pair = new_pair(config);
    pair.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("the seeded handshake completes");
    pair
}

/// One call the pair made on its server endpoint during a recorded handshake.
enum ServerCall {
    Datagram(Instant, Vec<u8>),
    Timeout(Instant),
    /// `poll_transmit` until it has nothing more.
    Drain(Instant),
}

/// A handshake of the seeded pair, recorded so that a fresh server can be brought to
/// the same established state without the client's half of the TLS work: the client
/// (kept, to seal packets with its 1-RTT keys) and every call made on the server.
pub struct Recorded {
    pub client: Pair,
    calls: Vec<ServerCall>,
}

impl Recorded {
    /// Runs the pair's handshake until both sides have confirmed it, recording the
    /// server's calls. Deterministic: the same config gives the same recording.
    pub fn new(config: &TransportConfig) -> Self {
        let mut pair = new_pair(config);
        let mut calls = vec![];
        let delay = Duration::from_millis(10);
        // (delivery time, sequence) -> (to the server?, datagram)
        let mut queue: BTreeMap<(Instant, u64), (bool, Vec<u8>)> = BTreeMap::new();
        let mut seq = 0;
        let mut buf = Vec::new();
        let mut server = None;
        loop {
            let now = pair.now;
            calls.push(ServerCall::Drain(now));
            for to_server in [true, false] {
                let ep = if to_server {
                    &mut pair.client
                } else {
                    &mut pair.server
                };
                buf.clear();
                while let Some(t) = ep.poll_transmit(now, &mut buf) {
                    seq += 1;
                    queue.insert(
                        (now + delay, seq),
                        (to_server, buf[buf.len() - t.size..].to_vec()),
                    );
                }
            }
            let confirmed = |p: &mut Pair, h| {
                p.server
                    .connection(h)
                    .is_some_and(|c: &Connection| c.is_handshake_confirmed())
            };
            if pair.client_conn().is_handshake_confirmed()
                && server.is_some_and(|h| confirmed(&mut pair, h))
            {
                break;
            }
            let next = [
                queue.keys().next().map(|k| k.0),
                pair.client.poll_timeout(),
                pair.server.poll_timeout(),
            ];
            let next = next
                .into_iter()
                .flatten()
                .min()
                .expect("a handshake has something to do");
            pair.now = pair.now.max(next);
            let now = pair.now;
            while let Some(entry) = queue.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let (to_server, mut d) = entry.remove();
                if to_server {
                    calls.push(ServerCall::Datagram(now, d.clone()));
                    if let Ok(h) = pair.server.handle_datagram(now, pair.client_addr, quiclab_proto::Ecn::NotEct, &mut d) {
                        server = Some(h);
                    }
                } else {
                    let _ = pair.client.handle_datagram(now, pair.server_addr, quiclab_proto::Ecn::NotEct, &mut d);
                }
            }
            pair.client.handle_timeout(now);
            calls.push(ServerCall::Timeout(now));
            pair.server.handle_timeout(now);
            assert!(
                now < Instant::from_millis(5_000),
                "the seeded handshake completes"
            );
        }
        pair.server_conn = server;
        Recorded {
            client: pair,
            calls,
        }
    }

    /// A fresh pair whose server has replayed the recording: its connection
    /// (`server_conn`) is established exactly as the recorded one; its client is unused.
    pub fn replay(&self, config: &TransportConfig) -> Pair {
        let mut pair = new_pair(config);
        let mut buf = Vec::new();
        let addr = pair.client_addr;
        for call in &self.calls {
            match call {
                ServerCall::Datagram(now, d) => {
                    let mut d = d.clone();
                    if let Ok(h) = pair.server.handle_datagram(*now, addr, quiclab_proto::Ecn::NotEct, &mut d) {
                        pair.server_conn = Some(h);
                    }
                }
                ServerCall::Timeout(now) => pair.server.handle_timeout(*now),
                ServerCall::Drain(now) => {
                    buf.clear();
                    while pair.server.poll_transmit(*now, &mut buf).is_some() {}
                }
            }
        }
        pair.now = self.client.now;
        pair
    }
}

/// A pair like [`established_pair`]'s, before its handshake, capturing every datagram
/// (for the seed-corpus writer).
pub fn capturing_pair() -> Pair {
    let link = LinkConfig::delay(Duration::from_millis(10));
    let tls = PairTls {
        configs: Some(tls_configs()),
        ..PairTls::default()
    };
    let config = self::config();
    let mut pair = Pair::with_tls(config.clone(), config, [link.clone(), link], 1, tls);
    pair.capture = Some(Vec::new());
    pair
}

/// Both sides' transport config in the recorded handshake: DATAGRAM and ack-frequency
/// offered, so those frames are legal and reach their code.
pub fn config() -> TransportConfig {
    TransportConfig {
        max_datagram_frame_size: Some(1200),
        min_ack_delay_us: Some(1000),
        ..TransportConfig::default()
    }
}

thread_local! {
    /// The recorded handshake (made once per thread) and the config it ran with.
    static RECORDED: (TransportConfig, Recorded) = {
        let config = config();
        let recorded = Recorded::new(&config);
        (config, recorded)
    };
}

/// Calls `f` with the config and this thread's recorded handshake.
pub fn with_recorded<T>(f: impl FnOnce(&TransportConfig, &Recorded) -> T) -> T {
    RECORDED.with(|(config, recorded)| f(config, recorded))
}
