//! quiclab-sim: a deterministic discrete-event network simulator that runs the real
//! quiclab-proto stack (real TLS, real packets) in virtual time. The links' behaviour
//! (queues, impairments, serialization) is quiclab-link's; `net/` wires hosts and links
//! into a topology, `workload/` is what runs on the hosts, `sim` the loop.

pub mod excerpt;
pub mod host;
pub mod net;
pub mod output;
pub mod scenario;
pub mod sim;
pub mod workload;

/// The results of a run, as data (`output/results.rs`), at the path users know.
pub use excerpt::excerpt;
pub use output::results;
pub use results::RunResult;
pub use scenario::Scenario;
pub use sim::{Progress, ProgressHook, SimError, Simulation};
