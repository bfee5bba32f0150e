//! What a run measured and how it is written: the results as data (`results`), the
//! metrics sinks that fill them, the statistics over the measurement window, pcap
//! files, result tables.

pub mod loss_epochs;
pub mod metrics;
pub mod pcap;
pub mod results;
pub mod tables;
pub mod window_stats;
