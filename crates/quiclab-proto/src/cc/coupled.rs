//! The coupled increase a multipath connection hands to a path's controller before an
//! ACK (issue 33 item 2): LIA's (`lia.rs`, RFC 6356) or OLIA's (`olia.rs`). Both replace
//! only Reno's congestion avoidance increase; slow start and the halving stay per path.

use super::{LiaCoupling, OliaIncrease};

/// Which coupled increase applies to the next ACK on a path (`None` at the call site:
/// uncoupled). Call contract: computed fresh from every active path's state right before
/// the ACK is processed, and only read by NewReno's congestion avoidance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Coupling {
    /// RFC 6356 §3: alpha and cwnd_total.
    Lia(LiaCoupling),
    /// draft-khalili-mptcp-congestion-control §3: this path's signed increase factor.
    Olia(OliaIncrease),
}
