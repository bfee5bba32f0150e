//! The real-time emulator's links from a scenario: a point-to-point topology's two
//! directions as quiclab-link's [`Duplex`], built by [`Network::build`] like a
//! simulation's, so a seed gives the same random streams as in `sim run`.

use crate::net::engine::saturating_secs;
use crate::net::topology::Network;
use crate::scenario::{Scenario, ScenarioError, Topology};
use quiclab_link::duplex::Duplex;
use quiclab_link::link::Link;
use quiclab_proto::Instant;

fn secs(s: f64) -> Instant {
    Instant::ZERO + saturating_secs(s)
}

/// Builds the links of a validated scenario (`Scenario::validate_links` or
/// `Scenario::parse`). Only `point_to_point` topologies: a dumbbell's pairs and access
/// links have no meaning with one real client and one real server (typed error naming
/// `topology.kind`). Measurement window and queue traces come from `measure`; times
/// count from [`Instant::ZERO`].
pub fn build_duplex(scenario: &Scenario, file: &str) -> Result<Duplex, ScenarioError> {
    if !matches!(scenario.topology, Topology::PointToPoint { .. }) {
        return Err(ScenarioError::Invalid {
            file: file.to_string(),
            key: "topology.kind".into(),
            why: "only point_to_point has one client and one server side".into(),
        });
    }
    if scenario.gateway().is_some() {
        return Err(ScenarioError::Invalid {
            file: file.to_string(),
            key: "topology.gateway".into(),
            why: "the emulator runs the two satellite links only, not a gateway".into(),
        });
    }
    if scenario.client_host().is_some() {
        return Err(ScenarioError::Invalid {
            file: file.to_string(),
            key: "topology.client".into(),
            why: "the emulator relays one path; a client host's interfaces are simulated only"
                .into(),
        });
    }
    let net = Network::build(&scenario.topology, scenario.seed, file)?;
    let m = &scenario.measure;
    let window = (secs(m.from_s), m.to_s.map_or(Instant::MAX, secs));
    let mut links = <[Link; 2]>::try_from(net.links).map_err(|_| ScenarioError::Invalid {
        file: file.to_string(),
        key: "topology".into(),
        why: "a point_to_point topology without a gateway has exactly two links".into(),
    })?;
    for l in &mut links {
        l.traces = m.traces;
        l.window = window;
    }
    Ok(Duplex::new(links, scenario.schedule.clone()))
}

#[cfg(test)]
mod tests;
