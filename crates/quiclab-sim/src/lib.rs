//! quiclab-sim: a deterministic discrete-event network simulator that runs the real
//! quiclab-proto stack (real TLS, real packets) in virtual time.

pub mod impair;
pub mod output;
pub mod queue;
pub mod results;
