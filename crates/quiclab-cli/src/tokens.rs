//! The client's `--token-cache FILE`: NEW_TOKEN tokens (RFC 9000 §8.1.3) kept between
//! runs, so a later run to the same server presents one and skips the Retry.
//!
//! One token per line, `SERVER_NAME HEX`, in server-name order. Tokens are opaque to the
//! client; a bad line is an error naming it, never skipped silently.

use anyhow::{bail, Context, Result};
use quiclab_proto::Endpoint;
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
        let (Some(name), Some(hex), None) = (parts.next(), parts.next(), parts.next()) else {
            bail!("{}: expected `SERVER_NAME HEX`", at());
        };
        let token = decode_hex(hex).with_context(at)?;
        if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
            bail!("{}: token of {} bytes", at(), token.len());
        }
        endpoint.insert_token(name, token);
    }
    Ok(())
}

/// Writes the endpoint's unused tokens to `path` (replacing it).
pub fn save(endpoint: &Endpoint, path: &Path) -> Result<()> {
    let mut out = String::new();
    for (name, token) in endpoint.tokens() {
        let _ = write!(out, "{name} ");
        for b in token {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\n');
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, out).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn decode_hex(s: &str) -> Result<Vec<u8>> {
    if s.len() % 2 != 0 {
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
        ep.insert_token("example.org", vec![0xab, 0x01]);
        save(&ep, &path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "example.org ab01\n"
        );
        let mut again = endpoint();
        load(&mut again, &path).unwrap();
        let got: Vec<_> = again
            .tokens()
            .map(|(n, t)| (n.to_string(), t.to_vec()))
            .collect();
        assert_eq!(got, vec![("example.org".to_string(), vec![0xab, 0x01])]);
        for bad in ["example.org", "example.org zz", "a b c", "x abc", "y "] {
            std::fs::write(&path, bad).unwrap();
            assert!(load(&mut endpoint(), &path).is_err(), "{bad:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
