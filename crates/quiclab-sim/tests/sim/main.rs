//! quiclab-sim's integration tests, one module per former test file, in ONE test binary:
//! each binary links and optimises the stack again, so one binary instead of 37 cut the
//! CI's build time (docs/PERFORMANCE.md, "CI time"). Run one file's tests with
//! `cargo test --release -p quiclab-sim --test sim determinism::`. validation.rs and
//! validation_tcp.rs stay their own binaries: scripts/doc_figures.py runs them by name. A
//! new test file goes here as a module.

#[path = "../common/mod.rs"]
mod common;
#[path = "../country_path/mod.rs"]
mod country_path;

mod ack_frequency;
mod ack_sizes;
mod aqm;
mod careful_resume_from_flow;
mod cc_bbr;
mod cc_hystart;
mod cc_multcp;
mod cc_prague;
mod corruption;
mod datagram_workload;
mod determinism;
mod ecn_links;
mod h3_page;
mod hosts;
mod interfaces;
mod line_rate;
mod link_profiles;
mod media_workload;
mod multipath_paths;
mod packet_protection;
mod pcap_decrypt;
mod pep;
mod rebinding;
mod scenario_errors;
mod scenario_files;
mod scenario_fuzz;
mod scenario_pcap;
mod scripted_drops;
mod session_from;
mod tcp_ecn;
mod tcp_fast_open;
mod tcp_flows;
mod tls_choices;
mod tls_records;
mod tls_tcp_read_stall;
mod trace_links;
mod web_workloads;
mod work_estimate;
mod zero_rtt_anti_deadlock;
