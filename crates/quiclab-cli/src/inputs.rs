//! What the command line reads from the host for its endpoints: the default seed from
//! the OS random source and the certificates of `--ca`.

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;

/// The given seed, or 64 bits from the OS (only the CLI reads OS randomness).
pub fn seed(given: Option<u64>) -> Result<u64> {
    if let Some(s) = given {
        return Ok(s);
    }
    let mut bytes = [0u8; 8];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| anyhow!("the OS random source failed; pass --seed"))?;
    Ok(u64::from_le_bytes(bytes))
}

/// Reads every certificate of a PEM file (for `--ca`).
pub fn load_certs(path: &Path) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>> {
    let pem = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let certs = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing {}", path.display()))?;
    if certs.is_empty() {
        bail!("{}: no certificate found", path.display());
    }
    Ok(certs)
}
