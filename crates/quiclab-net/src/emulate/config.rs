//! The scenario as the emulator reads it: the point-to-point topology's two link
//! directions (rate, delay, MTU, queue, impairments) and the `[[schedule]]` of link
//! changes, with times counted from the emulator's start. `measure.from_s`/`to_s`
//! bound the throughput window of links.csv and `measure.traces` records queue
//! lengths, as in `sim run`.
//!
//! Ignored (the endpoints are real programs with their own settings): `[client]`,
//! `[server]`, `[[flows]]`, `certificate_padding`, `certificate_type`, `[tls]`,
//! `packet_protection` (the real endpoints always use the AEAD) and `stop` (the
//! emulator runs until `--duration` or SIGINT/SIGTERM). They are still
//! checked (a scenario that `sim run` refuses is refused here too), but a scenario
//! without flows is fine.
//! Refused with a typed error: a dumbbell topology (one client, one server: there are
//! no pairs or access links to map them to) and `[[cross_traffic]]` (the emulator
//! carries only the real endpoints' datagrams).

use quiclab_link::duplex::Duplex;
use quiclab_sim::net::duplex::build_duplex;
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::Scenario;
use std::path::Path;

/// Why a scenario cannot drive the emulator.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    /// Unreadable, unparseable (unknown keys, wrong types) or invalid scenario: the
    /// same errors as `sim run`, naming the file and the key.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A valid scenario part the emulator cannot carry out.
    #[error("{file}: {key}: not supported by the emulator: {why}")]
    Unsupported {
        file: String,
        key: String,
        why: String,
    },
}

/// Reads and checks `path`, and builds its links.
pub fn load(path: &Path) -> Result<(Scenario, Duplex), EmulateError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        file: file.clone(),
        source,
    })?;
    parse_in(&text, &file, path.parent())
}

/// Parses and checks scenario text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<(Scenario, Duplex), EmulateError> {
    parse_in(text, file, None)
}

/// [`parse`] for text read from a file in `dir`: relative trace paths
/// (`topology.forward.trace`, ...) resolve against it, as in `sim run`.
pub fn parse_in(
    text: &str,
    file: &str,
    dir: Option<&Path>,
) -> Result<(Scenario, Duplex), EmulateError> {
    let mut scenario: Scenario = toml::from_str(text).map_err(|e| ScenarioError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    if let Some(dir) = dir {
        scenario.resolve_trace_paths(dir);
    }
    if !scenario.cross_traffic.is_empty() {
        return Err(EmulateError::Unsupported {
            file: file.to_string(),
            key: "cross_traffic".into(),
            why: "only the real endpoints' datagrams cross the emulated links".into(),
        });
    }
    if !matches!(
        scenario.topology,
        quiclab_sim::scenario::Topology::PointToPoint { .. }
    ) {
        return Err(EmulateError::Unsupported {
            file: file.to_string(),
            key: "topology.kind".into(),
            why: "only point_to_point (one client side, one server side)".into(),
        });
    }
    if scenario.flows.is_empty() {
        scenario.validate_links(file)?;
    } else {
        // The whole scenario, as `sim run` checks it (its flows are then ignored).
        Scenario::parse_in(text, file, dir)?;
    }
    let duplex = build_duplex(&scenario, file)?;
    Ok((scenario, duplex))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = "name = \"e\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"point_to_point\"\n\
        [topology.forward]\nrate_mbps = 20.0\ndelay_ms = 25.0\n[topology.return]\ndelay_ms = 25.0\n";

    fn err(text: &str) -> String {
        match parse(text, "s.toml") {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_links_without_flows() {
        assert!(parse(OK, "s.toml").is_ok());
    }

    #[test]
    fn typed_errors() {
        let e = err(&OK.replace(
            "delay_ms = 25.0\n[topology.return]",
            "delay_msx = 1.0\n[topology.return]",
        ));
        assert!(e.contains("s.toml") && e.contains("delay_msx"), "{e}");
        let e = err(&OK.replace("rate_mbps = 20.0", "rate_mbps = -1.0"));
        assert!(e.contains("topology.forward.rate_mbps"), "{e}");
        let e = err(&format!(
            "{OK}[topology.return.impairments]\nloss = {{ model = \"bernoulli\", p = 2.0 }}\n"
        ));
        assert!(e.contains("loss.p"), "{e}");
        let e = err(&OK.replace("\"point_to_point\"", "\"dumbbell\"\npairs = 1"));
        assert!(
            e.contains("topology.kind") && e.contains("not supported"),
            "{e}"
        );
        let cross = "[[cross_traffic]]\nname = \"x\"\nsize_min = 10\nsize_max = 10\ninterval_min_ms = 1.0\ninterval_max_ms = 1.0\n";
        let e = err(&format!("{OK}{cross}"));
        assert!(e.contains("cross_traffic"), "{e}");
        let e = err(&format!(
            "{OK}[[schedule]]\nat_s = -1.0\nlink = \"forward\"\n"
        ));
        assert!(e.contains("schedule[0].at_s"), "{e}");
        let e = err(&format!("{OK}[client]\nno_such_key = 1\n"));
        assert!(e.contains("client.no_such_key"), "{e}");
    }
}
