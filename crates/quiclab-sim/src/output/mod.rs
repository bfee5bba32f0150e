//! Writing what a run measured: metrics sinks, pcap files, result tables.

pub mod metrics;
pub mod pcap;
pub mod tables;
