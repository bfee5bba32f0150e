//! `quiclab probe`: one QUIC handshake per server with quiclab's client stack on real
//! UDP, measured from what the client receives (the instant-ACK survey of seed 000 as
//! a tool): whether the server acknowledges the ClientHello at once in an ACK-only
//! Initial before its ServerHello (instant ACK) or waits for its certificate (WFC),
//! the gap between the two, the server's first flight against the amplification limit
//! (RFC 9000 §8.1), the certificate chain, the transport parameters (RFC 9000 §18.2),
//! the versions (RFC 9000 §6) and the ALPN (RFC 9001 §8.1).
//!
//! # Call contract
//! [`Target::parse`] a server, then [`probe`] it (blocks its thread for at most about
//! [`ProbeOptions::timeout`]); anything that goes wrong (no address, no answer, a
//! refused handshake) is a [`ProbeReport`] whose `error` says so, never an `Err` or a
//! panic. Certificates are not verified (a measurement tool records what it gets);
//! the CertificateVerify signature is still checked.

mod analyse;
mod certs;
pub mod params;
mod target;

pub use analyse::Shape;
pub use certs::Chain;
pub use target::Target;

use crate::app::setup::{self, ALPN_HQ};
use crate::{mtu, AppError, Application, DriverConfig, EndpointDriver};
use quiclab_proto::events::{SharedSink, VecSink};
use quiclab_proto::tls::{self, ServerVerification};
use quiclab_proto::{CloseReason, ConnectionHandle, Endpoint, Instant, Side, TransportParameters};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

/// How every server is probed.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// ALPNs offered in the ClientHello, most preferred first (the server picks).
    pub alpns: Vec<Vec<u8>>,
    /// Longest wait for a server's handshake.
    pub timeout: Duration,
    /// Seed of the client's randomness (connection IDs, packet numbers).
    pub seed: u64,
    pub driver: DriverConfig,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            alpns: vec![crate::app::h3::ALPN_H3.to_vec(), ALPN_HQ.to_vec()],
            timeout: Duration::from_secs(5),
            seed: 0,
            driver: DriverConfig::default(),
        }
    }
}

/// What one probe found.
#[derive(Clone, Debug, Default)]
pub struct ProbeReport {
    pub target: Target,
    /// The address probed (the host's first), when it resolved.
    pub address: Option<SocketAddr>,
    /// Why the probe has no complete handshake: "timeout", "port unreachable", the
    /// server's or our close reason, a resolution error. `None`: it completed.
    pub error: Option<String>,
    /// The version of the connection at its end (RFC 9000 §15).
    pub version: Option<u32>,
    pub alpn: Option<String>,
    pub shape: Shape,
    pub chain: Chain,
    pub params: Option<TransportParameters>,
}

impl ProbeReport {
    fn failed(target: &Target, why: String) -> ProbeReport {
        ProbeReport {
            target: target.clone(),
            error: Some(why),
            ..ProbeReport::default()
        }
    }
}

/// Probes `target` once (see the module's contract).
pub fn probe(target: &Target, opts: &ProbeOptions) -> ProbeReport {
    let addr = match target.resolve() {
        Ok(a) => a,
        Err(e) => return ProbeReport::failed(target, e.to_string()),
    };
    match connect_and_measure(target, addr, opts) {
        Ok(r) => r,
        Err(e) => {
            let mut r = ProbeReport::failed(target, e.to_string());
            r.address = Some(addr);
            r
        }
    }
}

/// One handshake with `addr`; errors only for local failures (socket, config).
fn connect_and_measure(
    target: &Target,
    addr: SocketAddr,
    opts: &ProbeOptions,
) -> crate::Result<ProbeReport> {
    let flags = setup::Flags {
        interface_payload: mtu::route_mtu(addr).map(|m| mtu::payload_for(m, addr.ip())),
        ..setup::Flags::default()
    };
    let (config, choices) = setup::configure(&flags, Side::Client)?;
    let base = tls::client_config_with(ServerVerification::Insecure, &opts.alpns, None, &choices);
    let mut tls_config = (*base).clone();
    let (verifier, chain) = certs::RecordingVerifier::new();
    tls_config.dangerous().set_certificate_verifier(verifier);
    let bind: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let mut driver = EndpointDriver::bind(bind, &opts.driver)?;
    driver.socket().report_icmp_errors();
    let mut endpoint = Endpoint::new(config, None, opts.seed);
    let start = driver.clock().now();
    let h = endpoint
        .connect(start, std::sync::Arc::new(tls_config), &target.host, addr)
        .map_err(|e| crate::NetError::Connect {
            to: format!("{} ({addr})", target.host),
            why: e.to_string(),
        })?;
    let log = SharedSink::new(VecSink::new());
    if let Some(conn) = endpoint.connection_mut(h) {
        conn.set_event_sink(start, Box::new(log.clone()));
    }
    let mut app = Handshake {
        handle: h,
        timed_out: false,
    };
    // A watchdog stops the loop at the timeout, unless the probe ends first.
    let (done, wait) = mpsc::channel::<()>();
    let stop = driver.stop_handle();
    let timeout = opts.timeout;
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(timeout) {
            stop.stop();
        }
    });
    let run = driver.run(&mut endpoint, &mut app);
    drop(done);
    let _ = watchdog.join();
    run?;
    let mut report = ProbeReport {
        target: target.clone(),
        address: Some(addr),
        ..ProbeReport::default()
    };
    if let Some(conn) = endpoint.connection_mut(h) {
        drop(conn.take_event_sink());
        report.version = Some(conn.version());
        report.alpn = conn.alpn().map(|a| String::from_utf8_lossy(a).into_owned());
        report.params = conn.peer_params().cloned();
        if !conn.is_handshake_complete() {
            report.error = Some(if app.timed_out {
                "timeout".to_string()
            } else {
                conn.close_reason().map_or("closed".into(), close_text)
            });
        }
    } else {
        report.error = Some("connection gone".into());
    }
    report.shape = analyse::shape(&log.lock().events, start);
    report.chain = chain.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(report)
}

/// A close reason as the error column shows it.
fn close_text(reason: &CloseReason) -> String {
    match reason {
        CloseReason::Transport { owner, error } => {
            format!(
                "{owner:?} transport close {:#x}: {}",
                error.code.0, error.reason
            )
        }
        CloseReason::Application {
            owner,
            code,
            reason,
        } => format!("{owner:?} application close {code:#x}: {reason}"),
        CloseReason::IdleTimeout => "idle timeout".into(),
        CloseReason::HandshakeTimeout => "timeout".into(),
        CloseReason::PortUnreachable => "port unreachable (ICMP)".into(),
    }
}

/// The application: none; it closes the connection once the handshake completed
/// (H3_NO_ERROR for h3, RFC 9114 §8.1; 0 otherwise), or at the timeout.
struct Handshake {
    handle: ConnectionHandle,
    timed_out: bool,
}

impl Application for Handshake {
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError> {
        let _ = endpoint.take_touched();
        if let Some(conn) = endpoint.connection_mut(self.handle) {
            if conn.is_handshake_complete() && !conn.is_closed() {
                let code = match conn.alpn() {
                    Some(crate::app::h3::ALPN_H3) => crate::app::h3::H3_NO_ERROR,
                    _ => 0,
                };
                conn.close(now, code, "quiclab probe done");
            }
        }
        Ok(())
    }

    fn finished(&self, endpoint: &Endpoint) -> bool {
        endpoint
            .connection(self.handle)
            .is_none_or(|c| c.is_closed())
    }

    fn shutdown(&mut self, endpoint: &mut Endpoint, now: Instant) {
        if let Some(conn) = endpoint.connection_mut(self.handle) {
            if !conn.is_closed() {
                self.timed_out = !conn.is_handshake_complete();
                conn.close(now, 0, "quiclab probe timeout");
            }
        }
    }
}
