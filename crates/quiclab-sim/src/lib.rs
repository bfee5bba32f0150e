//! quiclab-sim: a deterministic discrete-event network simulator that runs the real
//! quiclab-proto stack (real TLS, real packets) in virtual time.

pub mod app;
pub mod duplex;
pub mod engine;
pub mod excerpt;
mod h2mux;
mod h3app;
pub mod impair;
pub mod link;
pub mod output;
mod pep;
pub mod queue;
pub mod scenario;
pub mod sim;
mod tcpflow;
pub mod tcptls;
mod tcpweb;
pub mod topology;
pub mod webapp;
pub mod webmeasure;
mod webquic;

/// The results of a run, as data (`output/results.rs`), at the path users know.
pub use excerpt::excerpt;
pub use output::results;
pub use results::RunResult;
pub use scenario::Scenario;
pub use sim::{Progress, ProgressHook, SimError, Simulation};
