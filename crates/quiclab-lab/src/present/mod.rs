//! Presenting results: figures from the result tables (drawn by [`plot`]), the plan's
//! claims and checks (samples -> estimate -> judge -> statements), reports and the
//! reproduction index, the named reproductions, and ad-hoc plots of any results CSV.

pub mod adhoc;
mod assumptions;
mod cwnd_series;
pub(crate) mod doc;
pub mod estimate;
pub mod figures;
pub mod index;
pub mod judge;
pub mod plot;
pub mod record;
pub mod report;
pub mod reproduce;
pub mod samples;
pub mod sources;
pub mod statement_csv;
mod statement_report;
pub mod statement_text;
pub mod statements;
