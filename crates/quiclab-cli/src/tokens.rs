//! The client's `--token-cache FILE`: NEW_TOKEN tokens (RFC 9000 §8.1.3) kept between
//! runs, so a later run to the same server presents one and skips the Retry.
//!
//! One token per line, `SERVER_NAME HEX [VERSION]`, in server-name order. RFC 9369 §5:
//! a token serves only connections that start in the QUIC version of the connection
//! that received it; VERSION is that version in 8 hex digits (`6b3343cf` for v2),
//! absent for version 1 (so files of earlier runs read as v1 tokens). Tokens are opaque
//! to the client; a bad line is an error naming it, never skipped silently.

use anyhow::{bail, Context, Result};
use quiclab_proto::{Endpoint, VERSION_1};
use std::fmt::Write as _;
use std::path::Path;

/// The longest token accepted from the file (a server's tokens are far shorter; this
/// bounds what a corrupted file can make us send).
const MAX_TOKEN_BYTES: usize = 1024;

/// Reads the tokens in `path` into the endpoint's store; a missing file is empty.
pub fn load(endpoint: &mut Endpoint, path: &Path) -> Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 1);
        let mut parts = line.split_whitespace();
        let fields = (parts.next(), parts.next(), parts.next(), parts.next());
        let (Some(name), Some(hex), version, None) = fields else {
            bail!("{}: expected `SERVER_NAME HEX [VERSION]`", at());
        };
        let token = decode_hex(hex).with_context(at)?;
        if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
            bail!("{}: token of {} bytes", at(), token.len());
        }
        let version = match version {
            None => VERSION_1,
            Some(v) if v.len() == 8 => u32::from_str_radix(v, 16)
                .ok()
                .with_context(|| format!("{}: version {v:?} is not 8 hex digits", at()))?,
            Some(v) => bail!("{}: version {v:?} is not 8 hex digits", at()),
        };
        endpoint.insert_token(name, version, token);
    }
    Ok(())
}

/// Writes the endpoint's unused tokens to `path` (replacing it).
pub fn save(endpoint: &Endpoint, path: &Path) -> Result<()> {
    let mut out = String::new();
    for (name, version, token) in endpoint.tokens() {
        let _ = write!(out, "{name} ");
        for b in token {
            let _ = write!(out, "{b:02x}");
        }
        if version != VERSION_1 {
            let _ = write!(out, " {version:08x}");
        }
        out.push('\n');
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, out).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn decode_hex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        bail!("odd number of hex digits");
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .context("not hex")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiclab_proto::VERSION_2;
    use std::sync::Arc;

    fn endpoint() -> Endpoint {
        Endpoint::new(Arc::new(Default::default()), None, 1)
    }

    #[test]
    fn round_trip_and_bad_lines() {
        let dir = std::env::temp_dir().join(format!("quiclab-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens");
        let mut ep = endpoint();
        load(&mut ep, &path).unwrap(); // missing: empty
        ep.insert_token("example.org", VERSION_1, vec![0xab, 0x01]);
        ep.insert_token("example.org", VERSION_2, vec![0xcd]);
        save(&ep, &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "example.org ab01\nexample.org cd 6b3343cf\n"
        );
        let mut again = endpoint();
        load(&mut again, &path).unwrap();
        let got: Vec<_> = again
            .tokens()
            .map(|(n, v, t)| (n.to_string(), v, t.to_vec()))
            .collect();
        let name = "example.org".to_string();
        let want = vec![
            (name.clone(), VERSION_1, vec![0xab, 0x01]),
            (name, VERSION_2, vec![0xcd]),
        ];
        assert_eq!(got, want);
        for bad in [
            "example.org",
            "example.org zz",
            "a b c",
            "x abc",
            "y ",
            "a ab 1",
            "a ab 6b3343cg",
            "a ab 6b3343cf 1",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(load(&mut endpoint(), &path).is_err(), "{bad:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
