//! Finding where in a TOML text a key is written, so errors found after parsing (an
//! empty axis, an unknown reference) still name a line. Best effort on the text: plans
//! are written by hand in the usual `[section]` / `key = value` style; when a key cannot
//! be found the error simply has no line.

use crate::error::LabError;

/// Strips one pair of surrounding quotes.
fn unquote(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

/// The header of a `[a.b]` or `[[a]]` line.
fn header(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = t.split('#').next().unwrap_or(t).trim();
    if t.starts_with("[[") && t.ends_with("]]") {
        Some(t[2..t.len() - 2].trim())
    } else if t.starts_with('[') && t.ends_with(']') {
        Some(t[1..t.len() - 1].trim())
    } else {
        None
    }
}

/// The (unquoted) key of a `key = value` line.
fn line_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('[') {
        return None;
    }
    let (k, _) = t.split_once('=')?;
    Some(unquote(k))
}

/// 1-based line of `key` written in table `section` ("" = top level). The dotted form
/// `section.key = ...` at the top level is found too.
pub fn line_of_key(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = "";
    let dotted = format!("{section}.{key}");
    for (i, line) in text.lines().enumerate() {
        if let Some(h) = header(line) {
            current = h;
            if !section.is_empty() && h == dotted {
                return Some(i + 1);
            }
            continue;
        }
        if let Some(k) = line_key(line) {
            if (current == section && k == key) || (current.is_empty() && k == dotted) {
                return Some(i + 1);
            }
        }
    }
    None
}

/// 1-based line of the `index`-th `[[section]]` header, falling back to the first line
/// mentioning `"name"` (for inline arrays).
pub fn line_of_entry(text: &str, section: &str, index: usize, name: &str) -> Option<usize> {
    let found = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            t.starts_with("[[") && header(l) == Some(section)
        })
        .nth(index)
        .map(|(i, _)| i + 1);
    found.or_else(|| {
        let quoted = format!("\"{name}\"");
        text.lines()
            .position(|l| l.contains(&quoted))
            .map(|i| i + 1)
    })
}

/// The plan file being checked, for errors that name its line and key.
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
}

impl Ctx<'_> {
    pub(crate) fn invalid(
        &self,
        line: Option<usize>,
        key: impl Into<String>,
        why: impl Into<String>,
    ) -> LabError {
        LabError::Invalid {
            file: self.file.to_string(),
            line,
            key: key.into(),
            why: why.into(),
        }
    }

    pub(crate) fn top(&self, key: &str, why: impl Into<String>) -> LabError {
        self.invalid(line_of_key(self.text, "", key), key, why)
    }

    pub(crate) fn axis(
        &self,
        i: usize,
        name: &str,
        field: &str,
        why: impl Into<String>,
    ) -> LabError {
        let line = line_of_entry(self.text, "axes", i, name);
        self.invalid(line, format!("axes[{i}] ({name}).{field}"), why)
    }
}

/// 1-based (line, column) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Turns a toml deserialization error into one naming the file, line, column and key.
/// The key is the unknown/missing field named in the message if there is one, else the
/// key written on the offending line, prefixed by its table.
pub fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> LabError {
    let message = e.message().trim().to_string();
    let (line, column) = match e.span() {
        Some(span) => {
            let (l, c) = line_col(text, span.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    let section = line.map_or("", |l| {
        text.lines()
            .take(l)
            .filter_map(header)
            .last()
            .unwrap_or_default()
    });
    let on_line = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| header(l).or_else(|| line_key(l)))
        .map(str::to_string);
    let named = ["unknown field `", "missing field `", "duplicate key `"]
        .iter()
        .find_map(|p| {
            let rest = &message[message.find(p)? + p.len()..];
            Some(rest[..rest.find('`')?].to_string())
        });
    let key = match (named, on_line) {
        (Some(n), _) if section.is_empty() => n,
        (Some(n), _) => format!("{section}.{n}"),
        (None, Some(k)) if section.is_empty() || Some(section) == Some(k.as_str()) => k,
        (None, Some(k)) => format!("{section}.{k}"),
        (None, None) => "(document)".into(),
    };
    LabError::Toml {
        file: file.to_string(),
        line,
        column,
        key,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\nrepetitions = 2\n\n[[axes]]\nname = \"a\"\n\n[[axes]]\nname = \"b\"\n\n[set]\n\"topology.forward.delay_ms\" = \"a\"\n[metrics]\ng = \"links[0].x\"\n";

    #[test]
    fn finds_lines() {
        assert_eq!(line_of_key(TEXT, "", "repetitions"), Some(2));
        assert_eq!(
            line_of_key(TEXT, "set", "topology.forward.delay_ms"),
            Some(11)
        );
        assert_eq!(line_of_key(TEXT, "metrics", "g"), Some(13));
        assert_eq!(line_of_key(TEXT, "metrics", "h"), None);
        assert_eq!(line_of_entry(TEXT, "axes", 1, "b"), Some(7));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
