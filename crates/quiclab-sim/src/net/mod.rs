//! The network model's room: the event queue that drives virtual time (`engine`) and
//! the hosts, links and routes built from a scenario's topology (`topology`). Link
//! behaviour itself (queues, impairments, serialization) is in the link models; what
//! runs on the hosts is in `workload`.

pub mod engine;
pub mod topology;
