//! The lab's error type. Every error a researcher can cause names the file and, where
//! it can be found, the line and the key, so a bad plan is fixed without guessing.

use crate::expr::ExprError;

/// "file:line:column" with the parts that are known.
fn location(file: &str, line: &Option<usize>, column: &Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
        (Some(l), None) => format!("{file}:{l}"),
        _ => file.to_string(),
    }
}

/// Errors of loading, expanding and running plans.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Reading or writing a file failed.
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    /// The plan is not valid TOML or does not match the schema (unknown key, wrong type,
    /// missing key).
    #[error("{}: {key}: {message}", location(file, line, column))]
    Toml {
        file: String,
        line: Option<usize>,
        column: Option<usize>,
        key: String,
        message: String,
    },
    /// The plan parses but says something impossible (empty axis, unknown reference...).
    #[error("{}: {key}: {why}", location(file, line, &None))]
    Invalid {
        file: String,
        line: Option<usize>,
        key: String,
        why: String,
    },
    /// An expression in `[set]`, `[expected]` or `[quick.set]` does not parse or names
    /// an unknown axis.
    #[error("{}: {key}: `{expr}` {source}", location(file, line, &None))]
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
    #[error("{}: {key}: {why}", location(file, line, &None))]
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
    #[error("{key}={value}: {why}")]
    Set {
        key: String,
        value: String,
        why: String,
    },
    /// A run failed in the simulator.
    #[error("run {label}: {why}")]
    Run { label: String, why: String },
    /// A real stack of `[endpoints]` cannot run on this machine (its `requires` command
    /// failed, or the quiclab binary is unknown). Not a failure of the plan: the caller
    /// reports the runs as not made (e.g. `reproduce all` skips the plan, a test skips).
    #[error("stack {stack} is not available here: {why}")]
    Unavailable { stack: String, why: String },
    /// A cached result or output could not be encoded or decoded.
    #[error("{file}: {why}")]
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
