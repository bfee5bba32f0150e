//! The report's "Claims" and "Checks" sections: one table per kind (each statement with
//! its statistic and aggregation, our estimate, the source's number or the project's
//! test, and its status or verdict with the reason), then, for a statement judged at
//! several points, a table of its points naming those that fall short.

use crate::plan::comparison::Comparison;
use crate::present::doc::Block;
use crate::present::sources::source_title;
use crate::present::statement_text::{estimate, how, ours};
use crate::present::statements::{CheckCounts, ClaimCounts, Evaluation, Judged};

/// The per-point table of a statement at several points (`words`: its status at each).
fn points_table(name: &str, j: &Judged, words: &[String]) -> Vec<Block> {
    let Some(cmp) = &j.comparison else {
        return Vec::new();
    };
    if j.points.len() < 2 {
        return Vec::new();
    }
    let rows = j
        .points
        .iter()
        .zip(words)
        .map(|(p, w)| {
            vec![
                p.label.clone(),
                p.estimate.map_or(0, |e| e.n).to_string(),
                p.estimate
                    .as_ref()
                    .map(|e| estimate(e, cmp))
                    .unwrap_or_else(|| "–".into()),
                w.clone(),
                p.reason.clone(),
            ]
        })
        .collect();
    vec![
        Block::Heading(3, format!("{name}: {}", how(cmp))),
        Block::Table {
            header: ["point", "pairs", "change", "status", "note"]
                .map(String::from)
                .to_vec(),
            rows,
        },
    ]
}

fn relative(cmp: Option<&Comparison>) -> bool {
    cmp.is_none_or(|c| c.statistic.is_relative())
}

/// The "Claims" section (empty without claims).
pub(crate) fn claims_blocks(e: &Evaluation) -> Vec<Block> {
    if e.claims.is_empty() {
        return Vec::new();
    }
    let mut counts = ClaimCounts::default();
    let mut details = Vec::new();
    let rows = e
        .claims
        .iter()
        .map(|r| {
            counts.add(r.status);
            let cmp = r.judged.comparison.as_ref();
            let published = match (&r.published, r.tolerance) {
                (Some(p), Some(t)) => format!(
                    "{} ({})",
                    p.describe(relative(cmp)),
                    p.describe_tolerance(t, relative(cmp))
                ),
                (Some(p), None) => p.describe(relative(cmp)),
                (None, _) => "–".into(),
            };
            let words: Vec<String> = r
                .point_status
                .iter()
                .map(|s| s.map_or("no verdict", |s| s.as_str()).to_string())
                .collect();
            details.extend(points_table(&r.spec.name, &r.judged, &words));
            vec![
                r.spec.claim.clone(),
                format!("{}, {}", source_title(&r.spec.source), r.spec.where_),
                cmp.map(|c| c.test.describe(c.statistic.is_relative()))
                    .unwrap_or_else(|| "–".into()),
                cmp.map(how).unwrap_or_else(|| "–".into()),
                ours(&r.judged),
                published,
                r.status.as_str().into(),
                r.reason.clone(),
            ]
        })
        .collect();
    let mut blocks = vec![
        Block::Heading(2, "Claims".into()),
        Block::Para(
            "What the sources say, judged on our runs. A claim is reproduced when its \
             direction holds (the 95% interval of the change lies on the claimed side, or \
             inside the band; a deterministic point is judged on its one value) and our \
             estimate lies within the tolerance of the source's number; direction only \
             when the direction holds but the number does not; not reproduced when the \
             interval lies wholly on the other side; inconclusive otherwise. At every \
             point, the worst point decides and is named. Claims do not change the exit \
             status."
                .into(),
        ),
        Block::Table {
            header: [
                "claim",
                "source",
                "claimed",
                "statistic",
                "ours",
                "source's number",
                "status",
                "why",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
        Block::Para(format!("Claims: {counts}.")),
    ];
    blocks.extend(details);
    blocks
}

/// The "Checks" section (empty without checks).
pub(crate) fn checks_blocks(e: &Evaluation) -> Vec<Block> {
    if e.checks.is_empty() {
        return Vec::new();
    }
    let mut counts = CheckCounts::default();
    let mut details = Vec::new();
    let rows = e
        .checks
        .iter()
        .map(|r| {
            counts.add(r.verdict);
            let cmp = r.judged.comparison.as_ref();
            let words: Vec<String> = r
                .judged
                .points
                .iter()
                .map(|p| p.verdict.map_or("no verdict", |v| v.as_str()).to_string())
                .collect();
            details.extend(points_table(&r.spec.name, &r.judged, &words));
            vec![
                r.spec.check.clone(),
                r.spec.basis.clone(),
                cmp.map(how).unwrap_or_else(|| "–".into()),
                ours(&r.judged),
                cmp.map(|c| c.test.describe(c.statistic.is_relative()))
                    .unwrap_or_else(|| "–".into()),
                r.verdict.as_str().into(),
                r.reason.clone(),
            ]
        })
        .collect();
    let mut blocks = vec![
        Block::Heading(2, "Checks".into()),
        Block::Para(
            "What the project expects of its model. A check holds when the 95% interval \
             of the change lies inside its test at every point (a deterministic point: its \
             one value), fails when it lies wholly outside at some point, and is \
             inconclusive otherwise. A check that does not hold, or has no data, makes \
             `quiclab reproduce` and `quiclab lab run` exit non-zero."
                .into(),
        ),
        Block::Table {
            header: [
                "check",
                "basis",
                "statistic",
                "ours",
                "test",
                "verdict",
                "why",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        },
        Block::Para(format!("Checks: {counts}.")),
    ];
    blocks.extend(details);
    blocks
}
