//! Step traces in CSV: `time_s,value` rows, the value holding from its time until the
//! next row's (the delay trace `time_s,one_way_delay_ms`, the loss trace
//! `time_s,loss_p`), or rows of several values (the loss trace's burst form,
//! `loss.rs`). An optional first line names the columns; blank lines are
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
    #[error("line {line}: expected {count} comma-separated numbers `{header}`")]
    Fields {
        line: usize,
        count: usize,
        header: &'static str,
    },
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

/// A parsed step trace: rows of `width` values.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    times: Vec<Instant>,
    /// Row after row.
    values: Vec<f64>,
    width: usize,
}

impl Steps {
    /// Parses the CSV text of a trace whose value column is `column`.
    pub fn parse(text: &str, column: Column) -> Result<Steps, StepsError> {
        Self::parse_rows(text, column.header, &[column])
    }

    /// Parses the CSV text of a trace with the value `columns` after `time_s`; `header`
    /// is the optional first line.
    pub fn parse_rows(
        text: &str,
        header: &'static str,
        columns: &[Column],
    ) -> Result<Steps, StepsError> {
        let mut steps = Steps {
            times: Vec::new(),
            values: Vec::new(),
            width: columns.len(),
        };
        let mut previous = 0.0;
        let mut first = true;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            let is_header = first && t.replace(' ', "") == header;
            first = false;
            if is_header {
                continue;
            }
            let time = row(t, line, header, columns, &mut steps.values)?;
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
        }
        if steps.times.is_empty() {
            return Err(StepsError::Empty);
        }
        Ok(steps)
    }

    /// The (first) value at `now`: the last row's at or before it (`None` before the
    /// first row).
    pub fn at(&self, now: Instant) -> Option<f64> {
        self.row_at(now).map(|r| r[0])
    }

    /// The values of the last row at or before `now` (`None` before the first row).
    pub fn row_at(&self, now: Instant) -> Option<&[f64]> {
        let i = self.times.partition_point(|&t| t <= now);
        let i = i.checked_sub(1)?;
        Some(&self.values[i * self.width..(i + 1) * self.width])
    }
}

fn number(field: &str, line: usize) -> Result<f64, StepsError> {
    let f = field.trim();
    f.parse().map_err(|_| StepsError::NotNumber {
        line,
        text: f.chars().take(QUOTE_CHARS).collect(),
    })
}

/// One `time_s,value...` row, checked: returns the time and appends the values.
fn row(
    text: &str,
    line: usize,
    header: &'static str,
    columns: &[Column],
    values: &mut Vec<f64>,
) -> Result<f64, StepsError> {
    let fields: Vec<&str> = text.splitn(columns.len() + 2, ',').collect();
    if fields.len() != columns.len() + 1 {
        return Err(StepsError::Fields {
            line,
            count: columns.len() + 1,
            header,
        });
    }
    let time = number(fields[0], line)?;
    if !(time.is_finite() && (0.0..=MAX_TIME_S).contains(&time)) {
        return Err(StepsError::BadTime { line, value: time });
    }
    for (field, column) in fields[1..].iter().zip(columns) {
        let value = number(field, line)?;
        if !(value.is_finite() && (column.min..=column.max).contains(&value)) {
            return Err(StepsError::BadValue {
                line,
                column: column.name,
                why: column.why,
                value,
            });
        }
        values.push(value);
    }
    Ok(time)
}
