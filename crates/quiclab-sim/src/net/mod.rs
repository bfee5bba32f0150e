//! The network model's room: the event queue that drives virtual time (`engine`) and
//! the hosts, links and routes built from a scenario's topology (`topology`), and the
//! emulator's two link directions built the same way (`duplex`). Link behaviour itself
//! (queues, impairments, serialization) is quiclab-link's; what runs on the hosts is in
//! `workload`.

pub mod duplex;
pub mod engine;
pub mod interfaces;
pub mod topology;
