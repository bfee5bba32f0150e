//! TLS for QUIC: rustls client and server configs, certificates, session tickets and
//! the choices an experiment varies (cipher suites, key exchange groups, certificate
//! types), all with quiclab's deterministic randomness and virtual clock.

pub use crate::crypto::cert::{
    client_config, client_config_on, client_config_with, load_pem, self_signed, self_signed_as,
    server_config, server_config_on, server_config_with, CertError, Identity, MemoryKeyLog,
    ServerVerification,
};
pub use crate::crypto::choices::{CertType, ChoiceError, CipherSuite, KxGroup, TlsChoices};
pub use crate::crypto::clock::VirtualClock;
pub use crate::crypto::provider::{cipher_suites_for, provider_for, with_rng};
pub use crate::crypto::session::{
    resuming_client_config, server_session_storage, ticketing_server_config, SessionCache,
};
