//! Step traces in CSV: `time_s,value` rows, the value holding from its time until the
//! next row's (the delay trace `time_s,one_way_delay_ms`, the loss trace
//! `time_s,loss_p`). An optional first line names the columns; blank lines are
//! skipped. Times are seconds from the start of the run, finite, non-negative and
//! non-decreasing (two rows at one time: the later wins). Before the first row the
//! link's own setting applies; after the last row its value holds (no repetition).

use quiclab_proto::Instant;
use std::time::Duration;

/// Why a step trace cannot be used (lines are 1-based).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StepsError {
    #[error("empty: no `time_s,value` row")]
    Empty,
    #[error("line {line}: expected two comma-separated numbers `{header}`")]
    Fields { line: usize, header: &'static str },
    #[error("line {line}: not a number: {text:?}")]
    NotNumber { line: usize, text: String },
    #[error("line {line}: time_s must be finite, >= 0 and <= 1e9, got {value}")]
    BadTime { line: usize, value: f64 },
    #[error("line {line}: time {value} s is before the previous row's ({previous} s)")]
    Decreasing {
        line: usize,
        previous: f64,
        value: f64,
    },
    #[error("line {line}: {column} {why}, got {value}")]
    BadValue {
        line: usize,
        column: &'static str,
        why: &'static str,
        value: f64,
    },
}

/// What a column accepts.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// The header line the file may start with, e.g. `time_s,loss_p`.
    pub header: &'static str,
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    /// The bound in words, for errors.
    pub why: &'static str,
}

/// One-way delay, ms: at most 1e12 (the simulator's 1e9 s limit).
pub const DELAY_MS: Column = Column {
    header: "time_s,one_way_delay_ms",
    name: "one_way_delay_ms",
    min: 0.0,
    max: 1e12,
    why: "must be finite, >= 0 and <= 1e12",
};

/// Loss probability.
pub const LOSS_P: Column = Column {
    header: "time_s,loss_p",
    name: "loss_p",
    min: 0.0,
    max: 1.0,
    why: "must be in [0, 1]",
};

/// The longest time a row may name, s (the scenario limit).
const MAX_TIME_S: f64 = 1e9;
const QUOTE_CHARS: usize = 40;

/// A parsed step trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    times: Vec<Instant>,
    values: Vec<f64>,
}

impl Steps {
    /// Parses the CSV text of a trace whose value column is `column`.
    pub fn parse(text: &str, column: Column) -> Result<Steps, StepsError> {
        let mut steps = Steps {
            times: Vec::new(),
            values: Vec::new(),
        };
        let mut previous = 0.0;
        let mut first = true;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            let header = first && t.replace(' ', "") == column.header;
            first = false;
            if header {
                continue;
            }
            let (time, value) = row(t, line, column)?;
            if time < previous {
                return Err(StepsError::Decreasing {
                    line,
                    previous,
                    value: time,
                });
            }
            previous = time;
            steps
                .times
                .push(Instant::ZERO + Duration::from_secs_f64(time));
            steps.values.push(value);
        }
        if steps.times.is_empty() {
            return Err(StepsError::Empty);
        }
        Ok(steps)
    }

    /// The value at `now`: the last row at or before it (`None` before the first row).
    pub fn at(&self, now: Instant) -> Option<f64> {
        let i = self.times.partition_point(|&t| t <= now);
        i.checked_sub(1).map(|i| self.values[i])
    }
}

fn number(field: &str, line: usize) -> Result<f64, StepsError> {
    let f = field.trim();
    f.parse().map_err(|_| StepsError::NotNumber {
        line,
        text: f.chars().take(QUOTE_CHARS).collect(),
    })
}

/// One `time_s,value` row, checked.
fn row(text: &str, line: usize, column: Column) -> Result<(f64, f64), StepsError> {
    let mut fields = text.split(',');
    let (Some(a), Some(b), None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(StepsError::Fields {
            line,
            header: column.header,
        });
    };
    let (time, value) = (number(a, line)?, number(b, line)?);
    if !(time.is_finite() && (0.0..=MAX_TIME_S).contains(&time)) {
        return Err(StepsError::BadTime { line, value: time });
    }
    if !(value.is_finite() && (column.min..=column.max).contains(&value)) {
        return Err(StepsError::BadValue {
            line,
            column: column.name,
            why: column.why,
            value,
        });
    }
    Ok((time, value))
}
