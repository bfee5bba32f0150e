//! The sources claims cite: the five seed documents (by number, titled as in the
//! design brief's table) and any publication named in full, in the index's order
//! (seeds first).

use std::cmp::Ordering;

/// Seed number and title.
pub const SEEDS: [(&str, &str); 5] = [
    ("000", "Instant ACK in QUIC handshakes (IMC '24)"),
    ("001", "QUIC's ACK policy and satellite"),
    ("002", "QUIC in the INET simulation suite"),
    (
        "003",
        "The QUIC Transport Protocol: Design and Internet-Scale Deployment (SIGCOMM '17)",
    ),
    ("004", "Getting up to Speed with Neqo and Careful Resume"),
];

/// Whether `source` is a seed's number.
pub fn is_seed(source: &str) -> bool {
    SEEDS.iter().any(|(n, _)| *n == source.trim())
}

/// "seed 003: The QUIC Transport Protocol ..." for a seed, the source as written
/// otherwise.
pub fn source_title(source: &str) -> String {
    match SEEDS.iter().find(|(n, _)| *n == source.trim()) {
        Some((n, title)) => format!("seed {n}: {title}"),
        None => source.trim().to_string(),
    }
}

/// The index's order: seeds by number, then other sources by name.
pub fn source_order(a: &str, b: &str) -> Ordering {
    (!is_seed(a), a.trim()).cmp(&(!is_seed(b), b.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_come_first() {
        let mut v = vec!["Mathis et al. 1997", "003", "000"];
        v.sort_by(|a, b| source_order(a, b));
        assert_eq!(v, ["000", "003", "Mathis et al. 1997"]);
        assert!(source_title("001").starts_with("seed 001: QUIC's ACK policy"));
        assert_eq!(source_title("RFC 9438"), "RFC 9438");
    }
}
