//! What a run measured and how it is written: the results as data (`results`), the
//! metrics sinks that fill them, the statistics over the measurement window, pcap
//! files, result tables.

pub mod ack_sizes;
pub mod loss_epochs;
pub mod metrics;
/// pcap files: the link models' writer (a link captures what it transmits).
pub use quiclab_link::pcap;
pub mod results;
pub mod tables;
pub mod window_stats;
