//! Presenting results: figures from the result tables (drawn by [`plot`]), the plan's
//! findings, reports and their index, the named reproductions, and ad-hoc plots of any
//! results CSV.

pub mod adhoc;
mod cwnd_series;
pub mod figures;
pub mod findings;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod verdict;
