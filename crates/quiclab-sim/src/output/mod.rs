//! What a run measured and how it is written: the results as data (`results`), the
//! metrics sinks that fill them, pcap files, result tables.

pub mod metrics;
pub mod pcap;
pub mod results;
pub mod tables;
