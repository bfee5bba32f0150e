//! TLS choices of a scenario: the servers' certificate type (`certificate_type`,
//! beside `certificate_padding`) and the cipher suites and key exchange groups the
//! flows' clients offer and servers accept (`[tls]`, overridden per side and per flow).
//!
//! ```toml
//! certificate_type = "rsa2048"        # "ed25519" (default) | "ecdsa_p256" | "rsa2048"
//!
//! [tls]                               # every flow, both sides
//! cipher_suites = ["chacha20_poly1305"]
//! kx_groups = ["x25519", "p256"]
//! server = { kx_groups = ["p256"] }   # one side only (also `client`)
//!
//! [[flows]]
//! name = "get"
//! workload = { kind = "request", size = 10000 }
//! tls = { cipher_suites = "aes256_gcm" }   # this flow only (also `client`/`server`)
//! ```
//!
//! Names are `TlsChoices`' (`quiclab_proto::tls`): cipher suites
//! `aes128_gcm`, `aes256_gcm`, `chacha20_poly1305`; groups `x25519`, `p256`. A list is
//! a TOML array in preference order, or one string with names separated by commas
//! (`"x25519, p256"`), which is what a plan's `[set]` or `sim run --set` can write
//! (`--set "tls.cipher_suites='chacha20_poly1305'"`). For each flow and side a key
//! comes from the first of: the flow's `tls.<side>`, the flow's `tls`, the scenario's
//! `tls.<side>`, the scenario's `tls`; absent everywhere, the defaults: all three
//! suites (AES-128-GCM first) and X25519 only, what quiclab always used.
//!
//! The choices apply to QUIC flows and to TLS over TCP (`[flows.tls]` with a
//! `version`): TLS 1.3 uses the suites as named, TLS 1.2 the ECDHE suite with the same
//! AEAD (ECDHE_ECDSA for Ed25519 and ECDSA certificates, RFC 8422; ECDHE_RSA for RSA),
//! so a QUIC-vs-TCP comparison stays like for like. Both use the same certificate.
//!
//! The server follows the client's order (rustls's default): the negotiated suite is
//! the first of the client's list that the server accepts; a client whose first group
//! (the one it sends a key share for) the server does not accept gets a
//! HelloRetryRequest, one more round trip (RFC 8446 §4.1.4). The negotiated suite is
//! in the qlog's `parameters_set` (`tls_cipher`).
//!
//! Checked when loading: known names, no empty list, no name twice; per flow, a
//! client and server that share a suite and a group (else the handshake could never
//! succeed); a flow with `session_from` offers the same client choices as the flow it
//! resumes (a ticket is only offered by the client config that received it).
//!
//! Sizes (certificate / CertificateVerify signature): Ed25519 243 / 64 bytes, ECDSA
//! P-256 about 308 / 70-72 (DER integers vary with the signed data), RSA-2048 705 /
//! 256; `certificate_padding` adds to the certificate.
//!
//! Determinism: Ed25519 and ECDSA (RFC 6979) signatures are deterministic, so runs
//! repeat byte for byte. An RSA server signs its CertificateVerify with RSA-PSS, whose
//! salt comes from ring's OS random source: the signature's bytes, and with them the
//! traffic secrets after it, the 1-RTT ciphertext, the pcaps and `keys.log`, differ
//! from run to run. Sizes and timing do not depend on the salt, so results
//! (`results.json`, the CSVs, the summary) and qlog files repeat exactly.

use super::validate::Check;
use super::{Scenario, ScenarioError};
use quiclab_proto::tls::{CertType, CipherSuite, KxGroup, TlsChoices};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Names in preference order: a TOML array of strings, or one string of names
/// separated by commas (the form a plan's `[set]` can write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Names {
    Text(String),
    List(Vec<String>),
}

impl Names {
    /// The names, trimmed; empty pieces of a text (a trailing comma) are left out.
    fn items(&self) -> Vec<&str> {
        match self {
            Names::Text(s) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect(),
            Names::List(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

impl Serialize for Names {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Names::Text(t) => s.serialize_str(t),
            Names::List(v) => v.serialize(s),
        }
    }
}

impl schemars::JsonSchema for Names {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Names".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Names;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a name, names separated by commas, or a list of names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Names, E> {
                Ok(Names::Text(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Names, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = a.next_element::<String>()? {
                    v.push(s);
                }
                Ok(Names::List(v))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One side's (or both sides') choices as written; absent keys fall through to the
/// next table (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TlsChoiceKeys {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cipher_suites: Option<Names>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kx_groups: Option<Names>,
}

/// The scenario's `[tls]` table: choices of every flow's both sides, `client` and
/// `server` for one side.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TlsTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cipher_suites: Option<Names>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kx_groups: Option<Names>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<TlsChoiceKeys>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<TlsChoiceKeys>,
}

impl TlsTable {
    pub fn is_empty(&self) -> bool {
        *self == TlsTable::default()
    }
}

/// A flow's `[flows.tls]` table. On a TCP flow it turns TLS on (`version`, required
/// there) with optional early data; on any flow it overrides the scenario's choices
/// (`cipher_suites`, `kx_groups`, and per side `client`/`server`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    /// TLS over a TCP flow: `"1.3"` or `"1.2"` (TCP flows only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<TlsVersion>,
    /// Send the first request as TLS 1.3 early data when resuming (needs the flow's
    /// `session_from`, which names the earlier flow whose ticket is offered).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub early_data: bool,
    /// How both ends cut application data into records (TCP flows only): `"full"`
    /// (default) records of up to 16 KB, or `"dynamic"`, one TCP segment's worth per
    /// record for the first MiB and again after a second without writes, as the seed
    /// era's web servers did (`workload/tls_records.rs`).
    #[serde(default, skip_serializing_if = "TlsRecords::is_full")]
    pub records: TlsRecords,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher_suites: Option<Names>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kx_groups: Option<Names>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<TlsChoiceKeys>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<TlsChoiceKeys>,
}

impl TlsSettings {
    /// The keys that only a TCP flow may have, as `tls.<key>`, if any is set.
    pub fn tcp_only_key(&self) -> Option<&'static str> {
        if self.version.is_some() {
            Some("tls.version")
        } else if self.early_data {
            Some("tls.early_data")
        } else if !self.records.is_full() {
            Some("tls.records")
        } else {
            None
        }
    }
}

/// Where a table of choices is written: its key and its (both sides, client, server)
/// entries.
struct Layer<'a> {
    key: String,
    both: (&'a Option<Names>, &'a Option<Names>),
    client: Option<&'a TlsChoiceKeys>,
    server: Option<&'a TlsChoiceKeys>,
}

impl Layer<'_> {
    /// The (key, cipher suites, groups) of one entry: `None` = both sides.
    fn entry(&self, server: Option<bool>) -> Option<(String, &Option<Names>, &Option<Names>)> {
        match server {
            None => Some((self.key.clone(), self.both.0, self.both.1)),
            Some(s) => {
                let (name, keys) = if s {
                    ("server", self.server?)
                } else {
                    ("client", self.client?)
                };
                Some((
                    format!("{}.{name}", self.key),
                    &keys.cipher_suites,
                    &keys.kx_groups,
                ))
            }
        }
    }
}

/// `names` (written at `key`) as values of `T`, checked as the module docs say.
fn parse_names<T: DeserializeOwned + PartialEq>(
    c: Check,
    key: &str,
    names: &Names,
    what: &str,
    expected: &str,
) -> Result<Vec<T>, ScenarioError> {
    let mut out = Vec::new();
    for name in names.items() {
        let d: serde::de::value::StrDeserializer<serde::de::value::Error> =
            name.into_deserializer();
        let Ok(v) = T::deserialize(d) else {
            return c.bad(
                key,
                format!("unknown {what} {name:?} (expected {expected})"),
            );
        };
        if out.contains(&v) {
            return c.bad(key, format!("{name:?} is listed twice"));
        }
        out.push(v);
    }
    if out.is_empty() {
        return c.bad(key, format!("needs at least one {what} ({expected})"));
    }
    Ok(out)
}

const SUITES: &str = "aes128_gcm, aes256_gcm, chacha20_poly1305";
const GROUPS: &str = "x25519, p256";

fn parse_suites(c: Check, key: &str, n: &Names) -> Result<Vec<CipherSuite>, ScenarioError> {
    parse_names(
        c,
        &format!("{key}.cipher_suites"),
        n,
        "cipher suite",
        SUITES,
    )
}

fn parse_groups(c: Check, key: &str, n: &Names) -> Result<Vec<KxGroup>, ScenarioError> {
    parse_names(
        c,
        &format!("{key}.kx_groups"),
        n,
        "key exchange group",
        GROUPS,
    )
}

/// Choices as their scenario names: `["aes128_gcm", "chacha20_poly1305"]`.
fn listed<T: Serialize>(v: &[T]) -> String {
    toml::Value::try_from(v).map_or_else(|_| "?".into(), |v| v.to_string())
}

/// Whether the certificate type is the default (left out when a scenario is written).
pub(super) fn is_default_cert(t: &CertType) -> bool {
    *t == CertType::default()
}

impl Scenario {
    /// The scenario's `[tls]` table.
    fn scenario_layer(&self) -> Layer<'_> {
        let t = &self.tls;
        Layer {
            key: "tls".into(),
            both: (&t.cipher_suites, &t.kx_groups),
            client: t.client.as_ref(),
            server: t.server.as_ref(),
        }
    }

    /// Flow `i`'s `tls` table, if it has one.
    fn flow_layer(&self, i: usize) -> Option<Layer<'_>> {
        let f = &self.flows[i];
        let t = f.tls.as_ref()?;
        Some(Layer {
            key: format!("flows[{i}] ({}).tls", f.name),
            both: (&t.cipher_suites, &t.kx_groups),
            client: t.client.as_ref(),
            server: t.server.as_ref(),
        })
    }

    /// The TLS choices of flow `flow`'s client or server (see the module docs; `file`
    /// names the scenario in errors).
    pub fn tls_choices(
        &self,
        flow: usize,
        server: bool,
        file: &str,
    ) -> Result<TlsChoices, ScenarioError> {
        let c = Check { file };
        let mut choices = TlsChoices::default();
        let (mut suites, mut groups) = (false, false);
        let layers = self.flow_layer(flow).into_iter();
        for layer in layers.chain([self.scenario_layer()]) {
            for side in [Some(server), None] {
                let Some((key, s, g)) = layer.entry(side) else {
                    continue;
                };
                if let (false, Some(n)) = (suites, s) {
                    choices.cipher_suites = parse_suites(c, &key, n)?;
                    suites = true;
                }
                if let (false, Some(n)) = (groups, g) {
                    choices.kx_groups = parse_groups(c, &key, n)?;
                    groups = true;
                }
            }
        }
        Ok(choices)
    }

    /// Every choice as written (scenario-wide and per flow), then each flow's pair of
    /// sides and its `session_from` source.
    pub(super) fn check_tls(&self, c: Check) -> Result<(), ScenarioError> {
        let flows = (0..self.flows.len()).filter_map(|i| self.flow_layer(i));
        for layer in flows.chain([self.scenario_layer()]) {
            for side in [None, Some(false), Some(true)] {
                let Some((key, s, g)) = layer.entry(side) else {
                    continue;
                };
                if let Some(n) = s {
                    parse_suites(c, &key, n)?;
                }
                if let Some(n) = g {
                    parse_groups(c, &key, n)?;
                }
            }
        }
        for i in 0..self.flows.len() {
            self.check_flow_tls(c, i)?;
        }
        Ok(())
    }

    /// Flow `i`'s client and server share a suite and a group; a resuming flow offers
    /// its source's choices.
    fn check_flow_tls(&self, c: Check, i: usize) -> Result<(), ScenarioError> {
        let f = &self.flows[i];
        // The flow's own table, or the scenario's when the flow has none.
        let key = match f.tls {
            Some(_) => format!("flows[{i}] ({}).tls", f.name),
            None => "tls".to_string(),
        };
        let flow = format!("flow {:?}", f.name);
        let client = self.tls_choices(i, false, c.file)?;
        let server = self.tls_choices(i, true, c.file)?;
        if !client
            .cipher_suites
            .iter()
            .any(|s| server.cipher_suites.contains(s))
        {
            return c.bad(
                key,
                format!(
                    "{flow}: the client's cipher suites {} and the server's {} have none in common (the handshake would fail)",
                    listed(&client.cipher_suites), listed(&server.cipher_suites)
                ),
            );
        }
        if !client
            .kx_groups
            .iter()
            .any(|g| server.kx_groups.contains(g))
        {
            return c.bad(
                key,
                format!(
                    "{flow}: the client's key exchange groups {} and the server's {} have none in common (the handshake would fail)",
                    listed(&client.kx_groups), listed(&server.kx_groups)
                ),
            );
        }
        let source = f
            .session_from
            .as_ref()
            .and_then(|n| self.flows.iter().position(|g| &g.name == n));
        if let Some(j) = source {
            if self.tls_choices(j, false, c.file)? != client {
                return c.bad(
                    format!("flows[{i}] ({}).tls", f.name),
                    format!(
                        "a resuming flow's client offers the TLS choices of the flow it resumes ({:?}; session_from)",
                        self.flows[j].name
                    ),
                );
            }
        }
        Ok(())
    }
}

/// How a TLS-over-TCP sender sizes its records (`[flows.tls] records`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TlsRecords {
    /// Records of up to 16 KB of plaintext (RFC 8446 §5.1's maximum), as rustls writes
    /// them: what every recorded result was made with.
    #[default]
    Full,
    /// Dynamic record sizing: a record fills one TCP segment until 1 MiB was written,
    /// then 16 KB; back to one segment after 1 s without a write.
    Dynamic,
}

impl TlsRecords {
    pub fn is_full(&self) -> bool {
        *self == TlsRecords::Full
    }
}

/// The TLS version both ends speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum TlsVersion {
    #[serde(rename = "1.2")]
    Tls12,
    #[serde(rename = "1.3")]
    Tls13,
}
