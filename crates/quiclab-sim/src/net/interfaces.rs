//! The client host's interfaces in the network (`[topology.client]`,
//! `scenario/interfaces.rs`): each interface is an address of its own with a link
//! pair in front of the topology's links, so the route between the client and the
//! server depends on the address the client sends from (or the server sends to).

use super::topology::{build_link, NetInterface, Network};
use crate::scenario::{interface_addr, ClientHost, ScenarioError};

impl Network {
    /// Puts the client's interfaces in front of the point-to-point links: client
    /// (interface k) -> server crosses `links[2 + 2k]` then `links[0]`; server ->
    /// client (interface k) crosses `links[1]` then `links[3 + 2k]`.
    pub(super) fn add_client_interfaces(
        &mut self,
        h: &ClientHost,
        seed: u64,
        file: &str,
    ) -> Result<(), ScenarioError> {
        let (client, server) = (0, 1);
        for (k, i) in h.interfaces.iter().enumerate() {
            let key = format!("topology.client.interfaces[{k}]");
            let fwd = self.links.len();
            self.links.push(build_link(
                &format!("{}_forward", i.name),
                &i.forward,
                seed,
                file,
                &format!("{key}.forward"),
            )?);
            self.links.push(build_link(
                &format!("{}_return", i.name),
                &i.ret,
                seed,
                file,
                &format!("{key}.return"),
            )?);
            let host = if k == 0 {
                client
            } else {
                self.hosts.push(interface_addr(self.hosts[client], k));
                self.hosts.len() - 1
            };
            let up = vec![fwd, 0];
            let down = vec![1, fwd + 1];
            for (pair, links) in [((host, server), up), ((server, host), down)] {
                match self.route_of.get(&pair) {
                    Some(&r) => self.routes[r] = links,
                    None => {
                        self.route_of.insert(pair, self.routes.len());
                        self.routes.push(links);
                    }
                }
            }
            self.interfaces.push(NetInterface {
                name: i.name.clone(),
                host,
                links: [fwd, fwd + 1],
            });
        }
        Ok(())
    }

    /// For each link, the interface it belongs to (`None` for the others); empty
    /// without interfaces.
    pub fn link_interfaces(&self) -> Vec<Option<usize>> {
        if self.interfaces.is_empty() {
            return Vec::new();
        }
        let mut of = vec![None; self.links.len()];
        for (k, i) in self.interfaces.iter().enumerate() {
            for l in i.links {
                of[l] = Some(k);
            }
        }
        of
    }
}
