//! quiclab-sim: a deterministic discrete-event network simulator that runs the real
//! quiclab-proto stack (real TLS, real packets) in virtual time.

pub mod duplex;
pub mod excerpt;
pub mod impair;
pub mod link;
pub mod net;
pub mod output;
pub mod queue;
pub mod scenario;
pub mod sim;
pub mod workload;

/// The results of a run, as data (`output/results.rs`), at the path users know.
pub use excerpt::excerpt;
pub use output::results;
pub use results::RunResult;
pub use scenario::Scenario;
pub use sim::{Progress, ProgressHook, SimError, Simulation};
