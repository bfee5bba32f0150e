//! CSV for the lab's own result files (`runs.csv`, `summary.csv`, `findings.csv`): a
//! small RFC 4180 reader (a header row plus data rows, quoted fields that may hold
//! commas, doubled quotes and newlines, and empty cells read as missing values), the
//! field quoting the writers use, and the row filter figures and findings select points
//! with. Kept in-house so reports and plots need no extra dependency, and so every error
//! names file and line.

use crate::plan::AxisValue;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A CSV file read into memory: the header and the rows (`None` = empty cell).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Where the table came from (a file path or a name), for error messages.
    pub source: String,
    /// The 1-based line each row starts on (quoted newlines make rows span lines).
    pub lines: Vec<usize>,
}

/// A CSV error, naming the file and (when known) the line.
#[derive(Clone, Debug, PartialEq)]
pub struct CsvError {
    pub source: String,
    pub line: Option<usize>,
    pub why: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.source, line, self.why),
            None => write!(f, "{}: {}", self.source, self.why),
        }
    }
}

impl std::error::Error for CsvError {}

/// Reads and parses the CSV file at `path`.
pub fn read(path: impl AsRef<Path>) -> Result<Table, CsvError> {
    let path = path.as_ref();
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CsvError {
        source: source.clone(),
        line: None,
        why: e.to_string(),
    })?;
    parse(&text, &source)
}

/// Parses CSV `text`; `source` names it in errors. Lines that are completely empty are
/// skipped (a trailing newline, or blank lines between rows). A cell that is empty and
/// unquoted reads as `None`; a quoted empty cell (`""`) reads as `Some("")`.
pub fn parse(text: &str, source: &str) -> Result<Table, CsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err = |line: usize, why: String| CsvError {
        source: source.to_string(),
        line: Some(line),
        why,
    };
    let mut records: Vec<(usize, Vec<Option<String>>)> = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    while chars.peek().is_some() {
        // Skip blank lines between records.
        match chars.peek() {
            Some('\n') => {
                chars.next();
                line += 1;
                continue;
            }
            Some('\r') => {
                chars.next();
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
                continue;
            }
            _ => {}
        }
        let start = line;
        let mut record = Vec::new();
        loop {
            // One field.
            let mut field = String::new();
            let mut quoted = false;
            if chars.peek() == Some(&'"') {
                quoted = true;
                let quote_line = line;
                chars.next();
                loop {
                    match chars.next() {
                        None => return Err(err(quote_line, "unterminated quoted field".into())),
                        Some('"') => {
                            if chars.peek() == Some(&'"') {
                                chars.next();
                                field.push('"');
                            } else {
                                break;
                            }
                        }
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                    }
                }
                match chars.peek() {
                    None | Some(',') | Some('\n') | Some('\r') => {}
                    Some(c) => {
                        return Err(err(line, format!("unexpected {c:?} after a closing quote")))
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    match c {
                        ',' | '\n' | '\r' => break,
                        '"' => {
                            return Err(err(line, "quote inside an unquoted field".into()));
                        }
                        _ => {
                            field.push(c);
                            chars.next();
                        }
                    }
                }
            }
            record.push(if field.is_empty() && !quoted {
                None
            } else {
                Some(field)
            });
            match chars.next() {
                Some(',') => continue,
                Some('\r') => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    line += 1;
                    break;
                }
                Some('\n') => {
                    line += 1;
                    break;
                }
                None => break,
                Some(c) => return Err(err(line, format!("unexpected {c:?}"))),
            }
        }
        records.push((start, record));
    }
    let mut records = records.into_iter();
    let Some((_, header)) = records.next() else {
        return Err(CsvError {
            source: source.to_string(),
            line: None,
            why: "empty file (no header)".into(),
        });
    };
    let header: Vec<String> = header.into_iter().map(Option::unwrap_or_default).collect();
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for (start, record) in records {
        if record.len() != header.len() {
            return Err(err(
                start,
                format!(
                    "{} fields, but the header has {}",
                    record.len(),
                    header.len()
                ),
            ));
        }
        rows.push(record);
        lines.push(start);
    }
    Ok(Table {
        header,
        rows,
        source: source.to_string(),
        lines,
    })
}

impl Table {
    /// The index of the column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The index of the column named `name`, or an error naming the column and file.
    pub fn require(&self, name: &str) -> Result<usize, CsvError> {
        self.column(name).ok_or_else(|| CsvError {
            source: self.source.clone(),
            line: None,
            why: format!("no column {name:?}"),
        })
    }

    /// The 1-based line row `row` starts on (0 if unknown, e.g. a hand-built table).
    pub fn line_of(&self, row: usize) -> usize {
        self.lines.get(row).copied().unwrap_or(0)
    }

    /// The text of a cell (`None` if empty or out of range).
    pub fn get(&self, row: usize, col: usize) -> Option<&str> {
        self.rows.get(row)?.get(col)?.as_deref()
    }

    /// A cell as a number: `Ok(None)` if empty (or only blanks), an error naming file,
    /// line and column if it is not a number.
    pub fn f64_at(&self, row: usize, col: usize) -> Result<Option<f64>, CsvError> {
        let Some(text) = self.get(row, col) else {
            return Ok(None);
        };
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse::<f64>().map(Some).map_err(|_| CsvError {
            source: self.source.clone(),
            line: Some(self.line_of(row)),
            why: format!(
                "column {:?}: {text:?} is not a number",
                self.header.get(col).map(String::as_str).unwrap_or("?")
            ),
        })
    }

    /// A cell of the column named `name` as a number (see [`Table::f64_at`]).
    pub fn f64(&self, row: usize, name: &str) -> Result<Option<f64>, CsvError> {
        let col = self.require(name)?;
        self.f64_at(row, col)
    }

    /// All values of the column named `name` as numbers (`None` for empty cells).
    pub fn f64_column(&self, name: &str) -> Result<Vec<Option<f64>>, CsvError> {
        let col = self.require(name)?;
        (0..self.rows.len()).map(|r| self.f64_at(r, col)).collect()
    }
}

/// A CSV field, quoted when needed (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Whether row `row` of `t` has every axis value of `filter`: an error names a filter
/// column the table lacks.
pub fn row_matches(
    t: &Table,
    row: usize,
    filter: &BTreeMap<String, AxisValue>,
) -> Result<bool, CsvError> {
    for (axis, want) in filter {
        if !cell_matches(t.get(row, t.require(axis)?), want) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a cell equals a filter value (numbers compare numerically).
pub fn cell_matches(cell: Option<&str>, want: &AxisValue) -> bool {
    let Some(cell) = cell else { return false };
    match want {
        AxisValue::Number(n) => cell
            .trim()
            .parse::<f64>()
            .is_ok_and(|c| c == *n || (c - n).abs() <= 1e-9 * c.abs().max(n.abs())),
        AxisValue::Text(s) => {
            cell == s
                || matches!((cell.trim().parse::<f64>(), s.trim().parse::<f64>()),
                    (Ok(a), Ok(b)) if a == b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_rows_and_missing_cells() {
        let t = parse("a,b,c\n1,,x\n2.5,3,\n", "t.csv").unwrap();
        assert_eq!(t.header, vec!["a", "b", "c"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0], vec![Some("1".into()), None, Some("x".into())]);
        assert_eq!(t.rows[1][2], None);
        assert_eq!(t.column("b"), Some(1));
        assert_eq!(t.column("z"), None);
        assert_eq!(t.f64(0, "a").unwrap(), Some(1.0));
        assert_eq!(t.f64(0, "b").unwrap(), None);
        assert_eq!(t.f64_column("a").unwrap(), vec![Some(1.0), Some(2.5)]);
        assert_eq!(t.lines, vec![2, 3]);
    }

    #[test]
    fn quoted_fields_with_commas_quotes_and_newlines() {
        let text = "name,note\r\n\"a,b\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",\"\"\r\nlast,x";
        let t = parse(text, "q.csv").unwrap();
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[0][0].as_deref(), Some("a,b"));
        assert_eq!(t.rows[0][1].as_deref(), Some("say \"hi\""));
        assert_eq!(t.rows[1][0].as_deref(), Some("multi\nline"));
        assert_eq!(t.rows[1][1].as_deref(), Some(""));
        assert_eq!(t.rows[2][1].as_deref(), Some("x"));
        assert_eq!(t.lines, vec![2, 3, 5]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("a,b\n1,2\n3\n", "r.csv").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("r.csv:3:"), "{e}");

        let e = parse("a\n\"open\n", "u.csv").unwrap_err();
        assert!(e.to_string().contains("unterminated"), "{e}");
        assert_eq!(e.line, Some(2));

        let e = parse("a\n\"x\"y\n", "g.csv").unwrap_err();
        assert!(e.to_string().contains("after a closing quote"), "{e}");

        let t = parse("a,b\nfoo,1\n", "n.csv").unwrap();
        let e = t.f64(0, "a").unwrap_err();
        assert!(e.to_string().contains("n.csv:2") && e.to_string().contains("\"a\""));
        let e = t.f64(0, "missing").unwrap_err();
        assert!(e.to_string().contains("n.csv") && e.to_string().contains("missing"));

        assert!(parse("", "e.csv").is_err());
        assert!(read("/nonexistent/x.csv")
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/x.csv"));
    }

    #[test]
    fn blank_lines_and_bom_are_ignored() {
        let t = parse("\u{feff}a,b\n\n1,2\n\n", "b.csv").unwrap();
        assert_eq!(t.header, vec!["a", "b"]);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.line_of(0), 3);
    }
}
