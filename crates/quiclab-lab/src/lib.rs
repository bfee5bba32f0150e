//! quiclab-lab: sweeps over simulator scenarios, run in parallel with caching, with
//! statistics, plots and reports, and the named reproductions of the seed documents.
//!
//! Data flow, one folder per stage:
//! - [`plan`]: `plan.toml` --[`plan::load::load_plan`]--> [`plan::Plan`]
//!   --[`plan::expand::expand`]--> [`plan::expand::RunSpec`]s;
//! - [`run`]: --[`run::runner::run_plan`] (or another executor: [`run::prepare`],
//!   [`run::execute`], [`run::collect`])--> cached runs (`out/cache/<key>.json`) -->
//!   [`run::rows::Row`]s and [`run::stats::Stats`] per point --> result files
//!   ([`run::output`]), and each invocation's runs with provenance as one Parquet file
//!   for SQL ([`run::store`]);
//! - [`present`]: figures, findings, reports and reproductions from the result files.
//!
//! Shared by the stages: [`error`], the expression language [`expr`] and [`csv`].

pub mod csv;
pub mod error;
pub mod expr;
pub mod plan;
pub mod present;
pub mod run;

pub use error::LabError;
pub use plan::expand::{expand, RunSpec};
pub use plan::load::load_plan;
pub use plan::points::apply_set;
pub use run::cache::load_run;
pub use run::collect::PlanOutcome;
pub use run::execute::{execute, ResolvedRun};
pub use run::prepare::PreparedPlan;
pub use run::rows::{PointSummary, Row};
pub use run::runner::{run_plan, RunOptions};
pub use run::stats::Stats;
