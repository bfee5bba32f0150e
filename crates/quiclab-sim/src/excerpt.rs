//! How much of a user's input an error message may quote. Errors name the offending key
//! and show the offending text, but a value can be a 100 MB string (a file, a Python
//! argument), and parser messages quote it whole (serde's "invalid type: string ..."
//! and toml's excerpt of the line each carry a full copy). [`excerpt`] is the one place
//! that bounds such a quote; every error that echoes input (the scenario loader, the
//! lab's errors, the CLI and the Python package) passes it through here.

use std::borrow::Cow;

/// The most characters of one unbroken run of input (a word, a quoted string, an
/// expression without blanks) that a message quotes.
pub const MAX_RUN: usize = 200;

/// The most characters of a whole message, whatever its words (input of many short
/// words, such as `[1, 1, 1, ...]`, is cut here).
pub const MAX_TEXT: usize = 1_000;

/// `text` as an error message may quote it: every run of non-blank characters longer
/// than [`MAX_RUN`] keeps its first and last `MAX_RUN / 2` characters around an
/// ellipsis with the run's length (`((((…[20001 chars]…))))`), and a text still longer
/// than [`MAX_TEXT`] is cut the same way. Text within the bounds is returned as is, so
/// it can be applied to input and to whole parser messages alike (it keeps a message's
/// own words, e.g. the list of expected keys of an "unknown field" error).
pub fn excerpt(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_RUN {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut clipped = false;
    let mut rest = text;
    while !rest.is_empty() {
        let blank = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..blank]);
        rest = &rest[blank..];
        let run = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(run);
        match clip(word, MAX_RUN) {
            Cow::Borrowed(w) => out.push_str(w),
            Cow::Owned(w) => {
                out.push_str(&w);
                clipped = true;
            }
        }
        rest = tail;
    }
    match clip(&out, MAX_TEXT) {
        Cow::Owned(short) => Cow::Owned(short),
        Cow::Borrowed(_) if clipped => Cow::Owned(out),
        Cow::Borrowed(_) => Cow::Borrowed(text),
    }
}

/// `s` cut to its first and last `max / 2` characters around `…[N chars]…` when it has
/// more than `max` characters.
fn clip(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let chars = s.chars().count();
    if chars <= max {
        return Cow::Borrowed(s);
    }
    let keep = max / 2;
    let head = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
    let tail = s.char_indices().nth_back(keep - 1).map_or(0, |(i, _)| i);
    Cow::Owned(format!("{}…[{chars} chars]…{}", &s[..head], &s[tail..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged() {
        let msg = "unknown field `bogus`, expected one of `a`, `b`, `c`";
        assert!(matches!(excerpt(msg), Cow::Borrowed(m) if m == msg));
        // Long, but made of short words: kept whole up to MAX_TEXT.
        let list = (0..60).map(|i| format!("`key_{i}`")).collect::<Vec<_>>();
        let msg = format!("expected one of {}", list.join(", "));
        assert!(msg.len() > MAX_RUN && msg.len() < MAX_TEXT);
        assert_eq!(excerpt(&msg), msg);
    }

    #[test]
    fn a_long_run_keeps_both_ends_and_its_length() {
        let expr = format!("{}10{}", "(".repeat(10_000), ")".repeat(10_000));
        let e = excerpt(&expr);
        assert_eq!(
            e,
            format!("{}…[20002 chars]…{}", "(".repeat(100), ")".repeat(100))
        );
        // Inside a parser's message: the words around the input stay.
        let msg = format!(
            "invalid type: string \"{}\", expected u64",
            "a".repeat(1 << 20)
        );
        let e = excerpt(&msg);
        assert!(e.starts_with("invalid type: string \"aaa"), "{e}");
        assert!(e.ends_with("aaa\", expected u64"), "{e}");
        assert!(e.contains("…[1048579 chars]…"), "{e}");
        assert!(e.chars().count() < 300, "{}", e.len());
    }

    #[test]
    fn many_short_words_are_cut_as_a_whole() {
        let msg = format!("x = [{}]", "1, ".repeat(1 << 20));
        let e = excerpt(&msg);
        assert!(e.chars().count() <= MAX_TEXT + 30, "{}", e.len());
        assert!(e.starts_with("x = [1, 1,") && e.ends_with("1, ]"), "{e}");
        let lines = "1\n".repeat(1 << 20);
        assert!(excerpt(&lines).chars().count() <= MAX_TEXT + 30);
    }

    #[test]
    fn multibyte_characters_are_cut_at_boundaries() {
        let s = "é".repeat(1000);
        let e = excerpt(&s);
        assert_eq!(
            e,
            format!("{}…[1000 chars]…{}", "é".repeat(100), "é".repeat(100))
        );
        // 150 two-byte characters: over MAX_RUN bytes but within MAX_RUN characters.
        let s = "é".repeat(150);
        assert_eq!(excerpt(&s), s);
    }
}
