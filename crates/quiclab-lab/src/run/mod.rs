//! Running a plan: expanded runs executed in parallel and cached, their metrics as rows,
//! per-point statistics, and the deterministic result files.

pub mod cache;
pub mod output;
pub mod rows;
pub mod runner;
pub mod stats;
