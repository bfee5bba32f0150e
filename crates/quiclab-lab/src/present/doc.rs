//! The small document model reports and the index are written in (headings,
//! paragraphs, lists, tables, code, images, links), rendered to Markdown and to a
//! self-contained HTML page, so both formats always say the same thing; and the
//! number formats their tables share.

use std::fmt::Write as _;

/// A piece of a report, rendered to Markdown and HTML.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Block {
    Heading(u8, String),
    Para(String),
    Quote(String),
    List(Vec<String>),
    Table {
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    Code(String),
    Image {
        title: String,
        src: String,
    },
    /// (text, href, note after the link)
    Links(Vec<(String, String, String)>),
}

/// Significant digits for tables: about 4, scientific outside 1e-3..1e6.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-3..6).contains(&mag) {
        format!("{x:.3e}")
    } else {
        let decimals = (3 - mag).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// A relative deviation as a signed percentage.
pub(crate) fn fmt_pct(x: f64) -> String {
    format!("{:+.2}%", x * 100.0)
}

/// A tolerance as a percentage without needless decimals ("5%", "2.5%").
pub(crate) fn fmt_tol(t: f64) -> String {
    let s = format!("{:.3}", t * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}
/// One line of text for a heading, list item or table cell.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn md_cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

pub(crate) fn to_markdown(doc: &[Block]) -> String {
    let mut out = String::new();
    for block in doc {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "{} {}", "#".repeat(*level as usize), one_line(text));
            }
            Block::Para(text) => out.push_str(text.trim_end()),
            Block::Quote(text) => {
                let lines: Vec<String> = text
                    .trim_end()
                    .lines()
                    .map(|l| format!("> {l}").trim_end().to_string())
                    .collect();
                out.push_str(&lines.join("\n"));
            }
            Block::List(items) => {
                let items: Vec<String> =
                    items.iter().map(|i| format!("- {}", one_line(i))).collect();
                out.push_str(&items.join("\n"));
            }
            Block::Table { header, rows } => {
                let line = |cells: &[String]| {
                    let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
                    format!("| {} |", cells.join(" | "))
                };
                let _ = writeln!(out, "{}", line(header));
                let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
                let rows: Vec<String> = rows.iter().map(|r| line(r)).collect();
                out.push_str(&rows.join("\n"));
            }
            Block::Code(text) => {
                let mut fence = "```".to_string();
                while text.contains(&fence) {
                    fence.push('`');
                }
                let _ = write!(out, "{fence}\n{}\n{fence}", text.trim_end());
            }
            Block::Image { title, src } => {
                let src = if src.contains(' ') {
                    format!("<{src}>")
                } else {
                    src.clone()
                };
                let _ = write!(out, "![{}]({src})", one_line(title).replace(']', "\\]"));
            }
            Block::Links(links) => {
                let items: Vec<String> = links
                    .iter()
                    .map(|(text, href, note)| {
                        format!(
                            "- [{}]({}) — {}",
                            one_line(text).replace(']', "\\]"),
                            href.replace(' ', "%20"),
                            one_line(note)
                        )
                    })
                    .collect();
                out.push_str(&items.join("\n"));
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th{background:#f2f2f2}
td:first-child,th:first-child{text-align:left}
pre{background:#f6f6f6;padding:.75rem;overflow-x:auto}
blockquote{border-left:4px solid #bbb;margin:1rem 0;padding:.25rem 1rem;color:#444}
figure{margin:1rem 0}
img{max-width:100%}";

pub(crate) fn to_html(title: &str, doc: &[Block]) -> String {
    let e = html_escape;
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n",
        e(title)
    );
    let paras = |text: &str| -> String {
        text.split("\n\n")
            .filter(|p| !p.trim().is_empty())
            .map(|p| format!("<p>{}</p>", e(p.trim()).replace('\n', "<br>\n")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for block in doc {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "<h{level}>{}</h{level}>", e(text));
            }
            Block::Para(text) => {
                let _ = writeln!(out, "{}", paras(text));
            }
            Block::Quote(text) => {
                let _ = writeln!(out, "<blockquote>\n{}\n</blockquote>", paras(text));
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for i in items {
                    let _ = writeln!(out, "<li>{}</li>", e(i));
                }
                out.push_str("</ul>\n");
            }
            Block::Table { header, rows } => {
                out.push_str("<table>\n<thead><tr>");
                for h in header {
                    let _ = write!(out, "<th>{}</th>", e(h));
                }
                out.push_str("</tr></thead>\n<tbody>\n");
                for row in rows {
                    out.push_str("<tr>");
                    for c in row {
                        let _ = write!(out, "<td>{}</td>", e(c));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</tbody>\n</table>\n");
            }
            Block::Code(text) => {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", e(text.trim_end()));
            }
            Block::Image { title, src } => {
                let _ = writeln!(
                    out,
                    "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
                    e(src),
                    e(title),
                    e(title)
                );
            }
            Block::Links(links) => {
                out.push_str("<ul>\n");
                for (text, href, note) in links {
                    let _ = writeln!(
                        out,
                        "<li><a href=\"{}\">{}</a> — {}</li>",
                        e(href),
                        e(text),
                        e(note)
                    );
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}
