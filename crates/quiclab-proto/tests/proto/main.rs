//! quiclab-proto's integration tests, one module per former test file, in ONE test
//! binary: each binary links and optimises the stack again, so one binary instead of 34
//! cut the CI's build time (docs/PERFORMANCE.md, "CI time"). Run one file's tests with
//! `cargo test --release -p quiclab-proto --test proto retry::`. A new test file goes here as
//! a module.

#[path = "../common/mod.rs"]
mod common;
#[path = "../download/mod.rs"]
mod download;
#[path = "../misbehaving/mod.rs"]
mod misbehaving;

mod burst;
mod careful_resume;
mod cc_spurious_and_bbr;
mod compatible_vn;
mod cubic;
mod datagram;
mod ecn;
mod endpoint_schedule;
mod flood;
mod handshake_limits;
mod handshake_options;
mod hystart;
mod key_update;
mod migration;
mod misbehave_ack;
mod misbehave_cids;
mod misbehave_crypto_flood;
mod misbehave_flow_control;
mod misbehave_frame_types;
mod misbehave_initial_scid;
mod misbehave_path_challenge;
mod misbehave_stream_limits;
mod misbehave_stream_offsets;
mod misbehave_transport_params;
mod multipath;
mod multipath_ack_path;
mod multipath_closure;
mod multipath_control;
mod multipath_coupled;
mod multipath_datagram;
mod multipath_ecn;
mod multipath_failed;
mod multipath_key_update;
mod multipath_qlog;
mod multipath_recovery;
mod multipath_redundant;
mod multipath_sched;
mod multipath_validation;
mod pair;
mod pmtud;
mod preferred_address;
mod retry;
mod rules;
mod stateless_reset;
mod tls_choices;
mod versions;
mod zero_rtt;
