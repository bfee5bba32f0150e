//! quiclab-lab: sweeps over simulator scenarios, run in parallel with caching, with
//! statistics, plots and reports, and the named reproductions of the seed documents.

pub mod adhoc;
pub mod csvread;
pub mod figures;
pub mod plan;
pub mod plot;
pub mod report;
