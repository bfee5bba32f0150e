//! The request URLs the runner gives a client (`https://HOST:PORT/PATH`): where to
//! connect, the name for TLS, the path to GET and the file name to save it under.

use std::net::{SocketAddr, ToSocketAddrs};

/// One request URL, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HOST:PORT as written (resolved by `addr`).
    pub authority: String,
    /// HOST without the port (TLS server name; an IP address is allowed).
    pub host: String,
    /// The path to GET, starting with '/'.
    pub path: String,
}

/// Why a URL was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum UrlError {
    NotHttps(String),
    NoPort(String),
    NoFileName(String),
    Unresolved(String),
}

impl std::fmt::Display for UrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrlError::NotHttps(u) => write!(f, "{u}: not an https:// URL"),
            UrlError::NoPort(u) => write!(f, "{u}: no HOST:PORT"),
            UrlError::NoFileName(u) => write!(f, "{u}: the path names no file"),
            UrlError::Unresolved(u) => write!(f, "{u}: the host does not resolve"),
        }
    }
}

impl std::error::Error for UrlError {}

impl Request {
    /// Parses `https://HOST:PORT/PATH` (a bracketed IPv6 host is allowed).
    pub fn parse(url: &str) -> Result<Request, UrlError> {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| UrlError::NotHttps(url.into()))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let colon = authority
            .rfind(':')
            .filter(|&i| !authority[i + 1..].is_empty() && !authority[i + 1..].contains(']'))
            .ok_or_else(|| UrlError::NoPort(url.into()))?;
        let host = authority[..colon]
            .trim_start_matches('[')
            .trim_end_matches(']');
        if host.is_empty() || authority[colon + 1..].parse::<u16>().is_err() {
            return Err(UrlError::NoPort(url.into()));
        }
        let req = Request {
            authority: authority.into(),
            host: host.into(),
            path: path.into(),
        };
        req.file_name()
            .ok_or_else(|| UrlError::NoFileName(url.into()))?;
        Ok(req)
    }

    /// The last path segment: the download's file name (as the runner's clients save it).
    pub fn file_name(&self) -> Option<&str> {
        let name = self.path.rsplit('/').next()?;
        (!name.is_empty() && name != "." && name != "..").then_some(name)
    }

    /// The first address HOST:PORT resolves to.
    pub fn addr(&self) -> Result<SocketAddr, UrlError> {
        self.authority
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| UrlError::Unresolved(self.authority.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_runners_urls() {
        let r = Request::parse("https://127.0.0.1:4433/10mb.bin").unwrap();
        assert_eq!(r.host, "127.0.0.1");
        assert_eq!(r.path, "/10mb.bin");
        assert_eq!(r.file_name(), Some("10mb.bin"));
        assert_eq!(r.addr().unwrap(), "127.0.0.1:4433".parse().unwrap());
        let v6 = Request::parse("https://[::1]:443/a/b.txt").unwrap();
        assert_eq!(v6.host, "::1");
        assert_eq!(v6.file_name(), Some("b.txt"));
    }

    #[test]
    fn refuses_bad_urls_with_a_reason() {
        let bad = |u: &str| Request::parse(u).unwrap_err();
        assert_eq!(
            bad("http://h:1/x"),
            UrlError::NotHttps("http://h:1/x".into())
        );
        assert_eq!(bad("https://h/x"), UrlError::NoPort("https://h/x".into()));
        assert_eq!(
            bad("https://h:99999/x"),
            UrlError::NoPort("https://h:99999/x".into())
        );
        assert_eq!(
            bad("https://[::1]/x"),
            UrlError::NoPort("https://[::1]/x".into())
        );
        assert_eq!(
            bad("https://h:1/"),
            UrlError::NoFileName("https://h:1/".into())
        );
        assert_eq!(
            bad("https://h:1/d/.."),
            UrlError::NoFileName("https://h:1/d/..".into())
        );
    }
}
