//! A server to probe: `https://host[:port][/path]`, `host:port`, `[v6]:port` or a
//! bare host (port 443, as HTTP/3's default).

use crate::app::url::Url;
use crate::error::{NetError, Result};
use std::net::SocketAddr;

/// A server as written, and where it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// As given (the CSV's first column).
    pub input: String,
    /// Host name or address (the TLS server name).
    pub host: String,
    pub port: u16,
}

impl Target {
    /// Errors: [`NetError::Config`] naming what is wrong.
    pub fn parse(s: &str) -> Result<Target> {
        let s = s.trim();
        let url = if s.contains("://") {
            Url::parse(s)?
        } else {
            Url::parse(&format!("https://{s}"))?
        };
        Ok(Target {
            input: s.to_string(),
            host: url.host,
            port: url.port,
        })
    }

    /// The first address the host resolves to.
    pub fn resolve(&self) -> Result<SocketAddr> {
        let url = Url {
            host: self.host.clone(),
            port: self.port,
            path: "/".into(),
        };
        url.resolve().map_err(|e| NetError::Config(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let t = Target::parse("https://example.org:8443/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("example.org", 8443));
        let t = Target::parse("127.0.0.1:4433").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 4433));
        let t = Target::parse("example.org").unwrap();
        assert_eq!(t.port, 443);
        let t = Target::parse("[::1]:9").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        assert!(Target::parse("http://x/").is_err());
        assert!(Target::parse("x:notaport").is_err());
    }
}
