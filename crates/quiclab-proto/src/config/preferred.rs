//! The server's preferred address (RFC 9000 §9.6, §18.2): the addresses a server
//! announces in its transport parameters, at most one per address family.

use super::ConfigError;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// `preferred_address = "127.0.0.2:4434"` or `["192.0.2.1:443", "[2001:db8::1]:443"]`:
/// the server's preferred addresses, one per family at most (RFC 9000 §18.2 carries
/// one IPv4 and one IPv6 address).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PreferredAddressConfig {
    One(SocketAddr),
    Several(Vec<SocketAddr>),
}

impl PreferredAddressConfig {
    /// Every address listed.
    pub fn addresses(&self) -> &[SocketAddr] {
        match self {
            PreferredAddressConfig::One(a) => std::slice::from_ref(a),
            PreferredAddressConfig::Several(v) => v,
        }
    }

    /// The IPv4 address, if one is listed.
    pub fn ipv4(&self) -> Option<SocketAddr> {
        self.addresses().iter().copied().find(SocketAddr::is_ipv4)
    }

    /// The IPv6 address, if one is listed.
    pub fn ipv6(&self) -> Option<SocketAddr> {
        self.addresses().iter().copied().find(SocketAddr::is_ipv6)
    }

    /// One or two addresses, at most one per family, none unspecified or with port 0
    /// (the transport parameter encodes "no address" as all zeros, RFC 9000 §18.2).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |why: &str| {
            Err(ConfigError {
                key: "preferred_address",
                why: why.to_string(),
            })
        };
        let all = self.addresses();
        let v4 = all.iter().filter(|a| a.is_ipv4()).count();
        if all.is_empty() || v4 > 1 || all.len() - v4 > 1 {
            return err("one or two addresses, at most one IPv4 and one IPv6 (RFC 9000 §18.2)");
        }
        if all.iter().any(|a| a.port() == 0 || a.ip().is_unspecified()) {
            return err(
                "an address with port 0 or an unspecified IP means no address (RFC 9000 §18.2)",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> PreferredAddressConfig {
        #[derive(Deserialize)]
        struct W {
            preferred_address: PreferredAddressConfig,
        }
        toml::from_str::<W>(text).unwrap().preferred_address
    }

    #[test]
    fn one_address_or_one_per_family() {
        let one = parse(r#"preferred_address = "127.0.0.2:4434""#);
        assert_eq!(one.ipv4(), Some("127.0.0.2:4434".parse().unwrap()));
        assert_eq!(one.ipv6(), None);
        assert!(one.validate().is_ok());
        let both = parse(r#"preferred_address = ["192.0.2.1:443", "[2001:db8::1]:443"]"#);
        assert!(both.validate().is_ok());
        assert!(both.ipv6().is_some());
        for bad in [
            r#"preferred_address = []"#,
            r#"preferred_address = ["192.0.2.1:443", "192.0.2.2:443"]"#,
            r#"preferred_address = "192.0.2.1:0""#,
            r#"preferred_address = "0.0.0.0:443""#,
        ] {
            assert!(parse(bad).validate().is_err(), "{bad}");
        }
    }
}
