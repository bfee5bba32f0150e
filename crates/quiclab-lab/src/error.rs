//! The lab's error type. Every error a researcher can cause names the file and, where
//! it can be found, the line and the key, so a bad plan is fixed without guessing.
//! What a message quotes of the input (keys, values, expressions, parser messages that
//! quote a value) is bounded by [`excerpt`]: a plan or a `--set` can hold a 100 MB
//! string, and the message must not.

use crate::expr::ExprError;
use quiclab_sim::excerpt;

/// "file:line:column" with the parts that are known.
fn location(file: &str, line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", excerpt(file)),
        (Some(l), None) => format!("{}:{l}", excerpt(file)),
        _ => excerpt(file).into_owned(),
    }
}

/// Errors of loading, expanding and running plans.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", excerpt(.file))]
    Io {
        file: String,
        source: std::io::Error,
    },
    /// The plan is not valid TOML or does not match the schema (unknown key, wrong type,
    /// missing key).
    #[error("{}: {}: {}", location(file, line, column), excerpt(.key), excerpt(.message))]
    Toml {
        file: String,
        line: Option<usize>,
        column: Option<usize>,
        key: String,
        message: String,
    },
    /// The plan parses but says something impossible (empty axis, unknown reference...).
    #[error("{}: {}: {}", location(file, line, &None), excerpt(.key), excerpt(.why))]
    Invalid {
        file: String,
        line: Option<usize>,
        key: String,
        why: String,
    },
    /// An expression in `[set]`, `[expected]` or `[quick.set]` does not parse or names
    /// an unknown axis.
    #[error("{}: {}: `{}` {source}", location(file, line, &None), excerpt(.key), excerpt(.expr))]
    Expr {
        file: String,
        line: Option<usize>,
        key: String,
        expr: String,
        source: Box<ExprError>,
    },
    /// The scenario a point resolves to is rejected by the simulator's validation (or a
    /// `[set]` value cannot be written into it). `why` names the point, its parameters
    /// and the base scenario.
    #[error("{}: {}: {}", location(file, line, &None), excerpt(.key), excerpt(.why))]
    Scenario {
        file: String,
        line: Option<usize>,
        /// The `[set]` key responsible, if it could be identified (else "set").
        key: String,
        why: String,
    },
    /// A scenario override `key=value` ([`crate::plan::points::apply_set`], e.g.
    /// `quiclab sim run --set`) cannot be applied: the key path does not parse, the value
    /// is no number, expression or `'text'`, or it does not fit the key's existing value.
    #[error("{}={}: {}", excerpt(.key), excerpt(.value), excerpt(.why))]
    Set {
        key: String,
        value: String,
        why: String,
    },
    /// A run failed in the simulator.
    #[error("run {}: {}", excerpt(.label), excerpt(.why))]
    Run { label: String, why: String },
    /// A real stack of `[endpoints]` cannot run on this machine (its `requires` command
    /// failed, or the quiclab binary is unknown). Not a failure of the plan: the caller
    /// reports the runs as not made (e.g. `reproduce all` skips the plan, a test skips).
    #[error("stack {} is not available here: {}", excerpt(.stack), excerpt(.why))]
    Unavailable { stack: String, why: String },
    /// A cached result or output could not be encoded or decoded.
    #[error("{}: {}", excerpt(.file), excerpt(.why))]
    Data { file: String, why: String },
}

impl LabError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> LabError {
        LabError::Io {
            file: path.display().to_string(),
            source,
        }
    }
}
