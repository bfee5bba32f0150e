//! The multipath packet scheduler a connection holds (draft-ietf-quic-multipath §5.5;
//! the schedulers are `crate::multipath_sched`): the configured scheduler, this
//! datagram's pick for new stream data, the candidates' buffer, and the redundant
//! scheduler's copy queues (`multipath_copies.rs`).

use super::multipath_copy_queues::CopyQueues;
use crate::config::MultipathScheduler;
use crate::multipath_sched::{build, Candidate, PacketScheduler};
use crate::wire::PathId;

/// Which path carries new stream data.
#[derive(Debug)]
pub(super) struct StreamScheduling {
    pub scheduler: Box<dyn PacketScheduler>,
    /// The path the scheduler picked for the datagram being built; `None`: no stream
    /// data on any path now (or multipath is not negotiated, when path 0 sends as
    /// without multipath).
    pub choice: Option<PathId>,
    /// The candidates handed to the scheduler, kept for the buffer.
    pub candidates: Vec<Candidate>,
    /// Copies of stream data waiting per path (only the redundant scheduler's).
    pub copies: CopyQueues,
}

impl StreamScheduling {
    pub fn new(kind: MultipathScheduler) -> Self {
        StreamScheduling {
            scheduler: build(kind),
            choice: None,
            candidates: Vec::new(),
            copies: CopyQueues::default(),
        }
    }
}
