//! The TLS configs of a run: one seeded server identity of the scenario's
//! `certificate_type` and `certificate_padding` (made once: an RSA key takes a while),
//! shared by QUIC and TLS-over-TCP flows, and per flow the client and server choices
//! (`scenario/tls.rs`). QUIC flows with equal choices share one client and one server
//! config: a resuming flow must offer its ticket from the config that received it
//! (rustls compares the verifier by pointer), and a run with the default choices
//! builds exactly the configs it always did.

use crate::net::topology::derive_seed;
use crate::scenario::TlsVersion;
use crate::scenario::{Scenario, ScenarioError, Transport};
use crate::workload::tcptls::{Resumption, TlsSetup};
use quiclab_proto::tls;
use quiclab_proto::tls::{CertType, Identity, ServerVerification, TlsChoices};
use std::sync::Arc;

/// The ALPN every simulated QUIC connection uses.
const ALPN: &[u8] = b"hq-interop";

type ClientConfig = Arc<rustls::ClientConfig>;
type ServerConfig = Arc<rustls::ServerConfig>;

/// The run's identity and each flow's TLS configs.
pub(super) struct TlsConfigs {
    identity: Identity,
    cert: CertType,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    /// Per flow: (client, server) choices.
    choices: Vec<(TlsChoices, TlsChoices)>,
    /// Per flow: its QUIC client and server configs (TCP flows: `None`).
    quic: Vec<Option<(ClientConfig, ServerConfig)>>,
}

/// An identity's copy (the key is cloned explicitly; it stays in memory).
fn copy(id: &Identity) -> Identity {
    Identity {
        chain: id.chain.clone(),
        key: id.key.clone_key(),
        signer: id.signer.clone(),
    }
}

/// RSA identities kept by a process (the most recent ones).
const RSA_MEMO: usize = 8;

/// The servers' identity. RSA-2048 ones are remembered by (seed, padding): making one
/// takes about half a second (a prime search), more than a whole handshake experiment,
/// and the runs of a sweep in one process often share the seed (common random
/// numbers). The identity is a pure function of its arguments, so the memo changes
/// no output.
fn identity(seed: u64, padding: usize, cert: CertType) -> Identity {
    let names = ["localhost".to_string()];
    if cert != CertType::Rsa2048 {
        return tls::self_signed_as(&names, seed, padding, cert);
    }
    let key = (seed, padding);
    if let Some((_, id)) = rsa_memo().iter().find(|(k, _)| *k == key) {
        return copy(id);
    }
    // Made without the lock: other runs' identities need not wait for this one.
    let id = tls::self_signed_as(&names, seed, padding, cert);
    let mut memo = rsa_memo();
    if !memo.iter().any(|(k, _)| *k == key) {
        if memo.len() >= RSA_MEMO {
            memo.remove(0);
        }
        memo.push((key, copy(&id)));
    }
    id
}

type RsaMemo = Vec<((u64, usize), Identity)>;

fn rsa_memo() -> std::sync::MutexGuard<'static, RsaMemo> {
    static MEMO: std::sync::Mutex<RsaMemo> = std::sync::Mutex::new(Vec::new());
    // A panic elsewhere while holding it leaves the list intact.
    MEMO.lock().unwrap_or_else(|e| e.into_inner())
}

impl TlsConfigs {
    /// Makes the identity and every QUIC flow's configs; `key_log` receives the
    /// secrets (for the pcaps) when given.
    pub(super) fn new(
        scenario: &Scenario,
        file: &str,
        key_log: Option<Arc<dyn rustls::KeyLog>>,
    ) -> Result<Self, ScenarioError> {
        let cert = scenario.certificate_type;
        let seed = derive_seed(scenario.seed, "certificate");
        let identity = identity(seed, scenario.certificate_padding, cert);
        let mut t = TlsConfigs {
            identity,
            cert,
            key_log,
            choices: Vec::with_capacity(scenario.flows.len()),
            quic: Vec::with_capacity(scenario.flows.len()),
        };
        let mut clients: Vec<(TlsChoices, ClientConfig)> = Vec::new();
        let mut servers: Vec<(TlsChoices, ServerConfig)> = Vec::new();
        for (i, f) in scenario.flows.iter().enumerate() {
            let client = scenario.tls_choices(i, false, file)?;
            let server = scenario.tls_choices(i, true, file)?;
            let quic = match f.transport {
                Transport::Quic => Some((
                    t.quic_client(&mut clients, &client),
                    t.quic_server(&mut servers, &server, file)?,
                )),
                Transport::Tcp => None,
            };
            t.choices.push((client, server));
            t.quic.push(quic);
        }
        Ok(t)
    }

    /// The QUIC client config for `choices` (made once per distinct choices).
    fn quic_client(
        &self,
        made: &mut Vec<(TlsChoices, ClientConfig)>,
        choices: &TlsChoices,
    ) -> ClientConfig {
        if let Some((_, c)) = made.iter().find(|(k, _)| k == choices) {
            return c.clone();
        }
        let roots = ServerVerification::Roots(vec![self.identity.chain[0].clone()]);
        let c = tls::client_config_with(roots, &[ALPN.to_vec()], self.key_log.clone(), choices);
        made.push((choices.clone(), c.clone()));
        c
    }

    /// The QUIC server config for `choices` (made once per distinct choices).
    fn quic_server(
        &self,
        made: &mut Vec<(TlsChoices, ServerConfig)>,
        choices: &TlsChoices,
        file: &str,
    ) -> Result<ServerConfig, ScenarioError> {
        if let Some((_, c)) = made.iter().find(|(k, _)| k == choices) {
            return Ok(c.clone());
        }
        let c = tls::server_config_with(copy(&self.identity), &[ALPN.to_vec()], None, choices)
            .map_err(|e| ScenarioError::Invalid {
                file: file.to_string(),
                key: "certificate".into(),
                why: e.to_string(),
            })?;
        made.push((choices.clone(), c.clone()));
        Ok(c)
    }

    /// QUIC flow `i`'s client config (before any session resumption).
    pub(super) fn quic_client_config(&self, i: usize) -> Option<&ClientConfig> {
        self.quic[i].as_ref().map(|(c, _)| c)
    }

    /// QUIC flow `i`'s server config (before any session tickets).
    pub(super) fn quic_server_config(&self, i: usize) -> Option<&ServerConfig> {
        self.quic[i].as_ref().map(|(_, s)| s)
    }

    /// TLS-over-TCP flow `i`'s client and server configs for `version`, resuming
    /// through `resume` when given.
    pub(super) fn tcp(
        &self,
        i: usize,
        version: TlsVersion,
        resume: Option<&Resumption>,
    ) -> Result<(ClientConfig, ServerConfig), rustls::Error> {
        let setup = TlsSetup {
            version,
            choices: self.choices[i].clone(),
            cert: self.cert,
        };
        let roots = vec![self.identity.chain[0].clone()];
        let client =
            crate::workload::tcptls::client_config(&setup, roots, self.key_log.clone(), resume)?;
        let server = crate::workload::tcptls::server_config(&setup, copy(&self.identity), resume)?;
        Ok((client, server))
    }
}
