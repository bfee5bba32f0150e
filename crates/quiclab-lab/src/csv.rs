//! CSV for the lab's own result files (`runs.csv`, `summary.csv`, `findings.csv`): a
//! table read through the `csv` crate (a header row plus data rows, empty cells read as
//! missing values, every error naming file and line), the writer the result files use,
//! and the row filter figures and findings select points with.

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

/// Parses CSV `text` with the `csv` crate (RFC 4180; a UTF-8 BOM is skipped); `source`
/// names it in errors. Blank lines are skipped (a trailing newline, or blank lines
/// between rows); every row must have as many fields as the header. An empty cell,
/// quoted or not, reads as `None`. The crate is lenient with stray quotes (`"x"y` reads
/// as `xy`, an unclosed quote runs to the end of the file, where the row's field count
/// then usually gives it away): no error for those.
pub fn parse(text: &str, source: &str) -> Result<Table, CsvError> {
    let mut lines_of = LineCounter::new(text);
    let err = |e: ::csv::Error, lines_of: &mut LineCounter| CsvError {
        source: source.to_string(),
        line: e.position().map(|p| lines_of.line_at(p.byte())),
        why: match e.kind() {
            ::csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format!("{len} fields, but the header has {expected_len}"),
            _ => e.to_string(),
        },
    };
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| err(e, &mut lines_of))?
        .iter()
        .map(String::from)
        .collect();
    if header.is_empty() {
        return Err(CsvError {
            source: source.to_string(),
            line: None,
            why: "empty file (no header)".into(),
        });
    }
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| err(e, &mut lines_of))?;
        lines.push(record.position().map_or(0, |p| lines_of.line_at(p.byte())));
        rows.push(
            record
                .iter()
                .map(|f| (!f.is_empty()).then(|| f.to_string()))
                .collect(),
        );
    }
    Ok(Table {
        header,
        rows,
        source: source.to_string(),
        lines,
    })
}

/// Line numbers from byte offsets that only grow. The `csv` crate's positions (and its
/// line numbers) point before the line breaks that precede a record (the end of the
/// previous one, blank lines); the line a record starts on is that of its first byte.
struct LineCounter<'a> {
    text: &'a [u8],
    /// Bytes counted so far, and the 1-based line at that offset.
    at: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter {
            text: text.as_bytes(),
            at: 0,
            line: 1,
        }
    }

    /// The line of the first byte at or after `byte` that is not a line break.
    fn line_at(&mut self, byte: u64) -> usize {
        let mut to = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        while self
            .text
            .get(to)
            .is_some_and(|b| matches!(b, b'\r' | b'\n'))
        {
            to += 1;
        }
        if to > self.at {
            self.line += self.text[self.at..to]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.at = to;
        }
        self.line
    }
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

/// CSV text of `records` (the header first), written by the `csv` crate: a field is
/// quoted only when it holds a comma, a quote or a line break (RFC 4180), lines end in
/// `\n`. Records may differ in length.
pub fn to_text<R, F>(records: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = F>,
    F: AsRef<str>,
{
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    // Writing into memory cannot fail, and UTF-8 fields make UTF-8 text.
    for r in records {
        for field in r {
            w.write_field(field.as_ref()).expect("CSV into a Vec");
        }
        w.write_record(None::<&[u8]>).expect("CSV into a Vec");
    }
    String::from_utf8(w.into_inner().expect("CSV into a Vec")).expect("UTF-8 fields")
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
        assert_eq!(t.rows[1][1], None, "a quoted empty cell is missing too");
        assert_eq!(t.rows[2][1].as_deref(), Some("x"));
        assert_eq!(t.lines, vec![2, 3, 5]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("a,b\n1,2\n3\n", "r.csv").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("r.csv:3:"), "{e}");

        // An unclosed quote runs to the end of the file: the row comes out short.
        let e = parse("a,b\n\"open,1\n2,3\n", "u.csv").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(
            e.to_string().contains("1 fields, but the header has 2"),
            "{e}"
        );

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
    fn written_text_reads_back_and_quotes_only_when_needed() {
        let records = [
            vec!["name", "note", "n"],
            vec!["a,b", "say \"hi\"", ""],
            vec!["multi\nline", "cr\rhere", "3"],
            vec!["plain", "", "4.5"],
        ];
        let text = to_text(records.clone());
        assert_eq!(
            text,
            "name,note,n\n\"a,b\",\"say \"\"hi\"\"\",\n\"multi\nline\",\"cr\rhere\",3\nplain,,4.5\n"
        );
        let t = parse(&text, "w.csv").unwrap();
        assert_eq!(t.header, records[0]);
        for (row, want) in t.rows.iter().zip(&records[1..]) {
            let want: Vec<Option<String>> = want
                .iter()
                .map(|c| (!c.is_empty()).then(|| c.to_string()))
                .collect();
            assert_eq!(row, &want);
        }
    }

    #[test]
    fn blank_lines_and_bom_are_ignored() {
        let t = parse("\u{feff}a,b\n\n1,2\n\n", "b.csv").unwrap();
        assert_eq!(t.header, vec!["a", "b"]);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.line_of(0), 3);
    }
}
