//! The reproduction index (`index.md` and `index.html` of `quiclab reproduce`), read as
//! a reviewer reads a paper's claims: one table per source (seeds first) with each
//! claim, where the source makes it, the source's number, ours in this run and in the
//! last full run, the status and why; the counts per source and status; the project's
//! checks, counted separately per experiment; every statement not run with its reason;
//! then the reports.

use crate::csv;
use crate::plan::load::load_plan;
use crate::present::doc::{to_html, to_markdown, Block};
use crate::present::judge::ClaimStatus;
use crate::present::record::{experiment_path, LastFullRun};
use crate::present::report::{overall_verdict, ReportError};
use crate::present::sources::{source_order, source_title};
use crate::present::statement_text::ours;
use crate::present::statements::{
    evaluate_dir, CheckCounts, CheckVerdict, ClaimCounts, ClaimResult, Evaluation,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One results directory as the index sees it.
struct Entry {
    /// Its path under the output directory ("quic-vs-tcp/4-countries").
    path: String,
    title: String,
    /// The report's one-line verdict, or the error that kept it from being read.
    note: String,
    evaluation: Evaluation,
    quick: bool,
}

fn read_entry(root: &Path, dir: &Path) -> Entry {
    let path = experiment_path(root, dir);
    let read = || -> Result<(String, String, Evaluation, bool), ReportError> {
        let plan = load_plan(dir)?;
        let summary = csv::read(dir.join("summary.csv"))?;
        let evaluation = evaluate_dir(dir)?;
        let mut parts: Vec<String> = overall_verdict(&plan, &summary)?.into_iter().collect();
        if !evaluation.claims.is_empty() {
            let mut c = ClaimCounts::default();
            evaluation.claims.iter().for_each(|r| c.add(r.status));
            parts.push(format!("claims: {c}"));
        }
        if !evaluation.checks.is_empty() {
            let mut c = CheckCounts::default();
            evaluation.checks.iter().for_each(|r| c.add(r.verdict));
            parts.push(format!("checks: {c}"));
        }
        let note = if parts.is_empty() {
            "no verdict (no tolerance, claims or checks)".into()
        } else {
            parts.join("; ")
        };
        Ok((plan.title, note, evaluation, plan.quick_run))
    };
    match read() {
        Ok((title, note, evaluation, quick)) => Entry {
            path,
            title,
            note,
            evaluation,
            quick,
        },
        Err(e) => Entry {
            title: path.clone(),
            path,
            note: format!("error: {e}"),
            evaluation: Evaluation::default(),
            quick: false,
        },
    }
}

/// Writes `root/index.md` and `root/index.html` over the results directories `dirs`
/// (under `root`), with `full` the last full run's record. Returns the path of
/// `index.md`.
pub fn write_index(
    root: &Path,
    dirs: &[PathBuf],
    full: &LastFullRun,
) -> Result<PathBuf, ReportError> {
    let entries: Vec<Entry> = dirs.iter().map(|d| read_entry(root, d)).collect();
    let quick = entries.iter().any(|e| e.quick);
    let mut doc = vec![
        Block::Heading(1, "quiclab reproductions".into()),
        Block::Para(format!(
            "This run: {}. Claims are what the sources say, reported as reproduced, \
             direction only, not reproduced, inconclusive or not run; they never change the \
             exit status. Checks are the project's own expectations of its model, counted \
             separately; a check that does not hold fails the run. The \"last full run\" \
             column is experiments/last-full-run.csv.",
            if quick {
                "quick (each plan's [quick] overrides: fewer points and repetitions)"
            } else {
                "full"
            }
        )),
    ];
    doc.extend(claims_by_source(&entries, full, quick));
    doc.extend(checks_by_experiment(&entries));
    doc.extend(not_run(&entries, full));
    let links = |file: &str| -> Vec<(String, String, String)> {
        entries
            .iter()
            .map(|e| {
                (
                    e.title.clone(),
                    format!("{}/{file}", e.path),
                    e.note.clone(),
                )
            })
            .collect()
    };
    std::fs::create_dir_all(root).map_err(|source| ReportError::Io {
        path: root.display().to_string(),
        source,
    })?;
    let write = |name: &str, text: String| {
        let p = root.join(name);
        std::fs::write(&p, text).map_err(|source| ReportError::Io {
            path: p.display().to_string(),
            source,
        })
    };
    let mut md = doc.clone();
    md.push(Block::Heading(2, "Reports".into()));
    md.push(Block::Links(links("report.md")));
    write("index.md", to_markdown(&md))?;
    doc.push(Block::Heading(2, "Reports".into()));
    doc.push(Block::Links(links("report.html")));
    write("index.html", to_html("quiclab reproductions", &doc))?;
    Ok(root.join("index.md"))
}

/// "reproduced, 2025-11-26" from the last full run, or "–".
fn full_cell(full: &LastFullRun, path: &str, kind: &str, name: &str) -> String {
    match full.get(path, kind, name) {
        Some(r) if r.ours.is_empty() || r.ours == "–" => format!("{} ({})", r.status, r.date),
        Some(r) => format!("{}: {} ({})", r.status, r.ours, r.date),
        None => "–".into(),
    }
}

/// One table per source, then the counts per source and status.
fn claims_by_source(entries: &[Entry], full: &LastFullRun, quick: bool) -> Vec<Block> {
    let mut by_source: BTreeMap<String, Vec<(&str, &ClaimResult)>> = BTreeMap::new();
    for e in entries {
        for c in &e.evaluation.claims {
            by_source
                .entry(c.spec.source.trim().to_string())
                .or_default()
                .push((&e.path, c));
        }
    }
    let mut sources: Vec<&String> = by_source.keys().collect();
    sources.sort_by(|a, b| source_order(a, b));
    let mut doc = vec![Block::Heading(2, "Claims by source".into())];
    if sources.is_empty() {
        doc.push(Block::Para("No plan states claims.".into()));
        return doc;
    }
    let ours_header = if quick { "ours (quick)" } else { "ours" };
    let mut counts_rows = Vec::new();
    for source in sources {
        let claims = &by_source[source];
        let mut counts = ClaimCounts::default();
        let rows = claims
            .iter()
            .map(|(path, c)| {
                counts.add(c.status);
                let relative = c
                    .judged
                    .comparison
                    .as_ref()
                    .is_none_or(|x| x.statistic.is_relative());
                vec![
                    format!("{} ({path}: {})", c.spec.claim, c.spec.name),
                    c.spec.where_.clone(),
                    c.published
                        .as_ref()
                        .map(|p| p.describe(relative))
                        .unwrap_or_else(|| "–".into()),
                    ours(&c.judged),
                    full_cell(full, path, "claim", &c.spec.name),
                    c.status.as_str().into(),
                    c.reason.clone(),
                ]
            })
            .collect();
        doc.push(Block::Heading(3, source_title(source)));
        doc.push(Block::Table {
            header: [
                "claim",
                "where",
                "source's number",
                ours_header,
                "last full run",
                "status",
                "why",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        let mut row = vec![source_title(source)];
        row.extend(ClaimStatus::ALL.iter().map(|&s| counts.get(s).to_string()));
        row.push(claims.len().to_string());
        counts_rows.push(row);
    }
    doc.push(Block::Heading(3, "Counts by source".into()));
    let mut header = vec!["source".to_string()];
    header.extend(ClaimStatus::ALL.iter().map(|s| s.as_str().to_string()));
    header.push("claims".into());
    doc.push(Block::Table {
        header,
        rows: counts_rows,
    });
    doc
}

/// The checks' verdicts counted per experiment, and the checks that fail the run.
fn checks_by_experiment(entries: &[Entry]) -> Vec<Block> {
    let mut by_group: BTreeMap<&str, CheckCounts> = BTreeMap::new();
    let mut failing = Vec::new();
    for e in entries {
        let group = e.path.split('/').next().unwrap_or(&e.path);
        for c in &e.evaluation.checks {
            by_group.entry(group).or_default().add(c.verdict);
            if c.verdict.is_failure() {
                failing.push(format!(
                    "{}: {}: {} ({})",
                    e.path,
                    c.spec.name,
                    c.verdict.as_str(),
                    c.reason
                ));
            }
        }
    }
    let mut doc = vec![Block::Heading(2, "Checks".into())];
    if by_group.is_empty() {
        doc.push(Block::Para("No plan states checks.".into()));
        return doc;
    }
    let mut total = CheckCounts::default();
    let mut rows = Vec::new();
    for (group, counts) in &by_group {
        let mut row = vec![group.to_string()];
        row.extend(CheckVerdict::ALL.iter().map(|&v| counts.get(v).to_string()));
        rows.push(row);
        for (&v, &n) in &counts.0 {
            (0..n).for_each(|_| total.add(v));
        }
    }
    let mut header = vec!["experiment".to_string()];
    header.extend(CheckVerdict::ALL.iter().map(|v| v.as_str().to_string()));
    doc.push(Block::Table { header, rows });
    doc.push(Block::Para(format!("All checks: {total}.")));
    if !failing.is_empty() {
        doc.push(Block::Para("Checks that fail the run:".into()));
        doc.push(Block::List(failing));
    }
    doc
}

/// Every claim and check not run in this run, with its reason (and a warning when a
/// claim left out of quick was not reproduced in the last full run).
fn not_run(entries: &[Entry], full: &LastFullRun) -> Vec<Block> {
    let mut items = Vec::new();
    for e in entries {
        for c in e
            .evaluation
            .claims
            .iter()
            .filter(|c| c.status == ClaimStatus::NotRun)
        {
            let mut line = format!("claim {} ({}): {}", c.spec.name, e.path, c.reason);
            if let Some(r) = full.get(&e.path, "claim", &c.spec.name) {
                if r.status == ClaimStatus::NotReproduced.as_str() {
                    line += " — not reproduced in the last full run";
                }
            }
            items.push(line);
        }
        for c in e
            .evaluation
            .checks
            .iter()
            .filter(|c| c.verdict == CheckVerdict::NotRun)
        {
            items.push(format!("check {} ({}): {}", c.spec.name, e.path, c.reason));
        }
    }
    if items.is_empty() {
        return Vec::new();
    }
    vec![Block::Heading(2, "Not run".into()), Block::List(items)]
}
