//! Running a plan: expanded runs executed in parallel and cached, their metrics as rows,
//! per-point statistics, and the deterministic result files.
//!
//! Stages: [`prepare`] (a plan's resolved runs, which are missing from the cache or
//! lack a metric there, [`complete`]) ->
//! [`execute`] (one run -> its cache entry; anywhere) -> [`collect`] (rows, statistics
//! and files from the cache, and the invocation's results-store file, [`store`]).
//! [`runner`] chains them locally. Points a plan's
//! `[endpoints]` gives to real stacks run through [`real`] (locally, one at a time).

pub mod cache;
pub mod collect;
pub(crate) mod complete;
pub mod execute;
pub mod output;
pub mod prepare;
pub mod real;
pub mod rows;
pub mod runner;
pub mod stats;
pub mod store;
