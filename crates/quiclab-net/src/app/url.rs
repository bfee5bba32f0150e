//! `https://host[:port]/path` URLs: just enough parsing for hq-interop fetches.

use crate::error::{Context, NetError, Result};
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed fetch URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// Host name or IP address, without IPv6 brackets (the TLS server name).
    pub host: String,
    pub port: u16,
    /// Starts with `/`.
    pub path: String,
}

impl Url {
    /// Errors: [`NetError::Config`] naming what is wrong with `s`.
    pub fn parse(s: &str) -> Result<Url> {
        let bad = |why: String| NetError::Config(format!("{s:?}: {why}"));
        let rest = s
            .strip_prefix("https://")
            .ok_or_else(|| bad("only https:// URLs are supported".into()))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if path.contains(char::is_whitespace) {
            return Err(bad("whitespace in path".into()));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("unclosed '[' in host".into()))?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host".into()));
        }
        let port = match port {
            None => 443,
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| bad(format!("bad port {p:?}")))?,
        };
        Ok(Url {
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }

    /// `host:port`, the key connections are grouped by.
    pub fn authority(&self) -> (String, u16) {
        (self.host.clone(), self.port)
    }

    /// The first address the host resolves to.
    pub fn resolve(&self) -> Result<SocketAddr> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .with_context(|| format!("resolving {}", self.host))?
            .next()
            .ok_or_else(|| NetError::Config(format!("{}: no address", self.host)))
    }

    /// The file name a body is saved under: the last path segment, or `index.html`.
    pub fn basename(&self) -> String {
        let last = self.path.rsplit('/').next().unwrap_or("");
        let last = last.split(['?', '#']).next().unwrap_or("");
        match last {
            "" | "." | ".." => "index.html".to_string(),
            name => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let u = Url::parse("https://127.0.0.1:4433/a/10000").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 4433, "/a/10000")
        );
        assert_eq!(u.basename(), "10000");
        let u = Url::parse("https://[::1]:8443").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 8443, "/")
        );
        assert_eq!(u.basename(), "index.html");
        assert_eq!(Url::parse("https://localhost/x").unwrap().port, 443);
        for bad in [
            "http://x/",
            "https://:44/",
            "https://x:99999/",
            "https://x:p/",
            "https://[::1/",
            "https://x/a b",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }
}
