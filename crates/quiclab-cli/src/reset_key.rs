//! `quiclab server --stateless-reset-key FILE`: the static key stateless reset tokens
//! derive from (RFC 9000 §10.3.2), kept in a file so that a restarted server computes
//! the tokens its previous process issued and resets the clients still sending to it.
//!
//! The file holds the 32-byte key as 64 hex digits (surrounding whitespace, such as a
//! final newline, is ignored). A missing file is created with a key from the OS random
//! source, readable by its owner only (0600). Without the flag the server draws a key
//! for the process alone. Only the CLI reads OS randomness; the core takes the key.

use quiclab_proto::{StatelessResetKey, STATELESS_RESET_KEY_LEN};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// Why no key could be had from `--stateless-reset-key`. Never quotes the file's
/// contents (a secret).
#[derive(Debug, thiserror::Error)]
pub enum ResetKeyError {
    #[error("reading the stateless reset key {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("creating the stateless reset key {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: a stateless reset key is 64 hex digits (32 bytes); found {len} characters")]
    Length { path: PathBuf, len: usize },
    #[error("{path}: a stateless reset key is 64 hex digits; character {at} is not one")]
    NotHex { path: PathBuf, at: usize },
    #[error("the OS random source failed")]
    Random,
}

/// Where the key came from, for the server's start-up line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Read,
    Created,
    Process,
}

/// The key in `path`, or a new one written there if the file does not exist.
pub fn load_or_create(path: &Path) -> Result<(StatelessResetKey, Origin), ResetKeyError> {
    match std::fs::read_to_string(path) {
        Ok(text) => return parse(path, &text).map(|k| (k, Origin::Read)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            let path = path.to_path_buf();
            return Err(ResetKeyError::Read { path, source });
        }
    }
    let bytes = random_bytes()?;
    let create = |source| ResetKeyError::Create {
        path: path.to_path_buf(),
        source,
    };
    // create_new: two servers starting at once must not both write; the loser reads.
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(path).map_err(|source| ResetKeyError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            return parse(path, &text).map(|k| (k, Origin::Read));
        }
        Err(e) => return Err(create(e)),
    };
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    writeln!(file, "{hex}")
        .and_then(|()| file.sync_all())
        .map_err(create)?;
    Ok((StatelessResetKey::new(bytes), Origin::Created))
}

/// A key for this process only (no `--stateless-reset-key`).
pub fn for_process() -> Result<(StatelessResetKey, Origin), ResetKeyError> {
    Ok((StatelessResetKey::new(random_bytes()?), Origin::Process))
}

fn random_bytes() -> Result<[u8; STATELESS_RESET_KEY_LEN], ResetKeyError> {
    let mut bytes = [0u8; STATELESS_RESET_KEY_LEN];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| ResetKeyError::Random)?;
    Ok(bytes)
}

fn parse(path: &Path, text: &str) -> Result<StatelessResetKey, ResetKeyError> {
    let digits = text.trim();
    if digits.len() != 2 * STATELESS_RESET_KEY_LEN {
        let len = digits.chars().count();
        return Err(ResetKeyError::Length {
            path: path.to_path_buf(),
            len,
        });
    }
    let mut bytes = [0u8; STATELESS_RESET_KEY_LEN];
    for (i, pair) in digits.as_bytes().chunks(2).enumerate() {
        let digit = |j: usize| {
            char::from(pair[j])
                .to_digit(16)
                .ok_or(ResetKeyError::NotHex {
                    path: path.to_path_buf(),
                    at: 2 * i + j + 1,
                })
        };
        bytes[i] = (digit(0)? * 16 + digit(1)?) as u8;
    }
    Ok(StatelessResetKey::new(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("quiclab-reset-key-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_missing_file_is_created_0600_and_read_back_the_same() {
        let path = dir().join("created.key");
        let _ = std::fs::remove_file(&path);
        let (k1, o1) = load_or_create(&path).unwrap();
        assert_eq!(o1, Origin::Created);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.len(), 65, "64 hex digits and a newline");
        let (k2, o2) = load_or_create(&path).unwrap();
        assert_eq!((k2, o2), (k1, Origin::Read));
    }

    #[test]
    fn bad_files_are_typed_errors_that_do_not_quote_the_key() {
        let d = dir();
        let short = d.join("short.key");
        std::fs::write(&short, "abcd\n").unwrap();
        let e = load_or_create(&short).unwrap_err();
        assert!(matches!(e, ResetKeyError::Length { len: 4, .. }), "{e}");
        let bad = d.join("bad.key");
        let mut text = "0".repeat(64);
        text.replace_range(10..11, "g");
        std::fs::write(&bad, &text).unwrap();
        let e = load_or_create(&bad).unwrap_err();
        assert!(matches!(e, ResetKeyError::NotHex { at: 11, .. }), "{e}");
        assert!(!e.to_string().contains(&text));
        let good = d.join("good.key");
        std::fs::write(&good, format!("  {}\n", "0a".repeat(32))).unwrap();
        let (k, _) = load_or_create(&good).unwrap();
        assert_eq!(k, StatelessResetKey::new([0x0a; 32]));
        let e = load_or_create(&d).unwrap_err(); // a directory
        assert!(matches!(e, ResetKeyError::Read { .. }), "{e}");
    }
}
