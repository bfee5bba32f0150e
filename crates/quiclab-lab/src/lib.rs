//! quiclab-lab: sweeps over simulator scenarios, run in parallel with caching, with
//! statistics, plots and reports, and the named reproductions of the seed documents.
//!
//! Data flow: `plan.toml` --[`expand::load_plan`]--> [`plan::Plan`]
//! --[`expand::expand`]--> [`expand::RunSpec`]s --[`runner::run_plan`]--> cached runs
//! (`out/cache/<key>.json`) --> rows, [`stats::Stats`] per point --> result files
//! ([`output`]).

pub mod adhoc;
pub mod csvread;
pub mod error;
pub mod expand;
pub mod expr;
pub mod figures;
pub mod findings;
pub mod locate;
pub mod output;
pub mod path;
pub mod plan;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod stats;
pub mod validate;
pub mod verdict;

pub use error::LabError;
pub use expand::{expand, load_plan, RunSpec};
pub use runner::{load_run, run_plan, PlanOutcome, PointSummary, Row, RunOptions};
pub use stats::Stats;
