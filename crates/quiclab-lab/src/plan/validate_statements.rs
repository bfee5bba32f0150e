//! Load-time checks of a plan's statements (docs/CLAIMS.md): names, references to
//! metrics and axis values, one test each, the statistic and aggregation, a claim's
//! reading keys and tolerance, `[quick] skip`, and the replication rule; plus the
//! warnings for what is deprecated.

use crate::error::LabError;
use crate::plan::comparison::{Comparison, Test};
use crate::plan::locate::{line_of_entry, line_of_key, Ctx};
use crate::plan::points::{apply_quick, axis_len, axis_values, canonical_value};
use crate::plan::statement::{ClaimSpec, KeyError};
use crate::plan::{AxisValue, Plan};
use std::collections::{BTreeMap, BTreeSet};

/// Repetitions a plan that is not deterministic runs, in full and in quick.
pub const MIN_REPETITIONS: u32 = 10;
pub const MIN_QUICK_REPETITIONS: u32 = 5;

/// Checks every statement and the plan keys about them.
pub(super) fn check_statements(
    cx: &Ctx,
    plan: &Plan,
    names: &BTreeSet<String>,
) -> Result<(), LabError> {
    if plan.quick_run {
        return Err(cx.top(
            "quick_run",
            "set by --quick in the plan as run, not a plan-file key",
        ));
    }
    if plan.min_pairs == 0 {
        return Err(cx.top("min_pairs", "must be at least 1"));
    }
    check_names_and_skips(cx, plan)?;
    for (i, c) in plan.claims.iter().enumerate() {
        let at = |key: &str, why: String| entry_error(cx, "claims", i, &c.name, key, why);
        check_claim(plan, names, c).map_err(|(key, why)| at(key, why))?;
    }
    for (i, c) in plan.checks.iter().enumerate() {
        let at = |key: &str, why: String| entry_error(cx, "checks", i, &c.name, key, why);
        for (key, text) in [("check", &c.check), ("basis", &c.basis)] {
            if text.trim().is_empty() {
                return Err(at(key, "say it in words".into()));
            }
        }
        let cmp = c.comparison().map_err(|(key, why)| at(key, why))?;
        check_comparison(plan, names, &cmp, &c.name).map_err(|(key, why)| at(key, why))?;
    }
    for (i, f) in plan.findings.iter().enumerate() {
        let at = |key: &str, why: String| entry_error(cx, "findings", i, &f.name, key, why);
        let cmp = f
            .as_check(plan.repetitions)
            .comparison()
            .map_err(|(key, why)| at(key, why))?;
        check_comparison(plan, names, &cmp, &f.name).map_err(|(key, why)| at(key, why))?;
    }
    if plan.uses_statements() || plan.deterministic {
        if let Some((key, why)) = replication_problem(plan) {
            return Err(cx.top(key, why));
        }
    }
    Ok(())
}

fn entry_error(cx: &Ctx, section: &str, i: usize, name: &str, key: &str, why: String) -> LabError {
    cx.invalid(
        line_of_entry(cx.text, section, i, name),
        format!("{section}[{i}] ({name}).{key}"),
        why,
    )
}

/// Statement names are unique over claims, checks and findings (`[quick] skip` names
/// them together), and every name `[quick]` skips exists.
fn check_names_and_skips(cx: &Ctx, plan: &Plan) -> Result<(), LabError> {
    let mut seen = BTreeSet::new();
    let all = plan
        .claims
        .iter()
        .map(|c| ("claims", &c.name))
        .chain(plan.checks.iter().map(|c| ("checks", &c.name)))
        .chain(plan.findings.iter().map(|f| ("findings", &f.name)));
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (section, name) in all {
        let i = index.entry(section).or_default();
        if !seen.insert(name.as_str()) {
            return Err(entry_error(
                cx,
                section,
                *i,
                name,
                "name",
                "another claim, check or finding has this name".into(),
            ));
        }
        *i += 1;
    }
    let skipped = plan.quick.skip.keys().map(|n| ("skip", n)).chain(
        plan.quick
            .skip_findings
            .iter()
            .map(|n| ("skip_findings", n)),
    );
    for (key, n) in skipped {
        if !seen.contains(n.as_str()) {
            return Err(cx.invalid(
                line_of_key(cx.text, "quick", key),
                format!("quick.{key}"),
                format!("`{n}` is not a claim, check or finding of this plan"),
            ));
        }
    }
    Ok(())
}

/// A claim's reading keys, its published number and tolerance, and its comparison.
fn check_claim(plan: &Plan, names: &BTreeSet<String>, c: &ClaimSpec) -> Result<(), KeyError> {
    for (key, text) in [
        ("source", &c.source),
        ("where", &c.where_),
        ("claim", &c.claim),
    ] {
        if text.trim().is_empty() {
            return Err((key, "must not be empty".into()));
        }
    }
    if c.not_run.as_deref().is_some_and(|r| r.trim().is_empty()) {
        return Err((
            "not_run",
            "give the reason the plan cannot test the claim".into(),
        ));
    }
    let cmp = c.comparison()?;
    if let Some(cmp) = &cmp {
        check_comparison(plan, names, cmp, &c.name)?;
    }
    let published = c.published()?;
    if published.is_some() && matches!(cmp.as_ref().map(|c| &c.test), Some(Test::Trend { .. })) {
        return Err((
            "published",
            "a trend is judged on its slope: a published number does not apply".into(),
        ));
    }
    match (&published, c.tolerance, c.tolerance_from.as_deref().map(str::trim)) {
        (None, Some(_), _) => Err(("tolerance", "a tolerance needs a `published` number".into())),
        (None, None, Some(_)) => Err(("tolerance_from", "goes with `published`".into())),
        (Some(_), Some(t), _) if !(t.is_finite() && t >= 0.0) => {
            Err(("tolerance", format!("{t} is not a finite number >= 0")))
        }
        (Some(_), Some(_), None | Some("")) => Err((
            "tolerance_from",
            "say where the tolerance comes from (the source's own spread), or leave `tolerance` out for the project default".into(),
        )),
        (Some(_), Some(_), Some("project default")) => Err((
            "tolerance_from",
            "\"project default\" is the tolerance left out: leave out `tolerance` too".into(),
        )),
        (Some(p), None, _) if p.default_tolerance().is_none() => Err((
            "tolerance",
            "a published value of 0 has no default tolerance: state one".into(),
        )),
        (Some(_), None, Some(from)) if from != "project default" => Err((
            "tolerance_from",
            "without `tolerance` the tolerance is the \"project default\"".into(),
        )),
        _ => Ok(()),
    }
}

/// A comparison names a metric and axis values that exist, the same axes on every
/// side, and a trend axis the sides leave free with at least two values (in quick
/// too, unless `[quick]` skips statement `name`).
fn check_comparison(
    plan: &Plan,
    names: &BTreeSet<String>,
    c: &Comparison,
    name: &str,
) -> Result<(), KeyError> {
    if !plan.metrics.contains_key(&c.metric) {
        return Err(("metric", format!("`{}` is not a metric", c.metric)));
    }
    if c.of.is_empty() {
        return Err(("of", "name at least one axis value".into()));
    }
    if c.against.is_empty() {
        if !c.than.is_empty() {
            return Err((
                "than",
                "comparing two effects needs `against`, the points both are measured against"
                    .into(),
            ));
        }
        if !plan.expected.contains_key(&c.metric) {
            return Err((
                "against",
                format!(
                    "without `against` the statement compares with [expected] `{}`, which is missing",
                    c.metric
                ),
            ));
        }
    } else if !c.of.keys().eq(c.against.keys()) {
        return Err((
            "against",
            "`of` and `against` must name the same axes".into(),
        ));
    }
    if !c.than.is_empty() && !c.of.keys().eq(c.than.keys()) {
        return Err(("than", "`of` and `than` must name the same axes".into()));
    }
    for (key, filter) in [("of", &c.of), ("against", &c.against), ("than", &c.than)] {
        check_filter(plan, names, filter).map_err(|why| (key, why))?;
    }
    if let Test::Trend { axis, .. } = &c.test {
        if !names.contains(axis) {
            return Err(("trend", format!("`{axis}` is not an axis")));
        }
        if c.of.contains_key(axis) {
            return Err((
                "trend",
                format!("`{axis}` is fixed by `of`: a trend runs along a free axis"),
            ));
        }
        let skipped = plan.quick.skip.contains_key(name)
            || plan.quick.skip_findings.iter().any(|n| n == name);
        let mut runs = vec![("", plan.clone())];
        if !skipped {
            runs.push(("quick: ", apply_quick(plan)));
        }
        for (label, p) in runs {
            let a = p.axes.iter().find(|a| &a.name == axis);
            if a.map_or(0, axis_len) < 2 {
                return Err((
                    "trend",
                    format!("{label}axis `{axis}` needs at least two values for a trend"),
                ));
            }
        }
    }
    Ok(())
}

/// Every axis a side filters on exists and has the value named.
fn check_filter(
    plan: &Plan,
    names: &BTreeSet<String>,
    filter: &BTreeMap<String, AxisValue>,
) -> Result<(), String> {
    for (axis, v) in filter {
        if !names.contains(axis) {
            return Err(format!("`{axis}` is not an axis"));
        }
        let a = plan.axes.iter().find(|a| &a.name == axis);
        if let Some(a) = a.filter(|a| a.values.is_some()) {
            if !axis_values(a)
                .iter()
                .any(|x| canonical_value(x) == canonical_value(v))
            {
                return Err(format!("axis `{axis}` has no value {}", show_value(v)));
            }
        }
    }
    Ok(())
}

fn show_value(v: &AxisValue) -> String {
    match v {
        AxisValue::Number(n) => n.to_string(),
        AxisValue::Text(s) => format!("\"{s}\""),
    }
}

/// What breaks the replication rule (the key and why): a deterministic plan runs one
/// repetition and no real-time endpoints; any other runs at least 10 (5 in quick).
fn replication_problem(plan: &Plan) -> Option<(&'static str, String)> {
    let quick = plan.quick.repetitions.unwrap_or(plan.repetitions);
    if plan.deterministic {
        if plan.endpoints.is_some() {
            return Some((
                "deterministic",
                "runs through [endpoints] are wall-clock, never deterministic".into(),
            ));
        }
        if plan.repetitions != 1 || quick != 1 {
            return Some((
                "deterministic",
                format!(
                    "a deterministic plan runs one repetition (here {} in full, {quick} in quick)",
                    plan.repetitions
                ),
            ));
        }
        return None;
    }
    if plan.repetitions < MIN_REPETITIONS || quick < MIN_QUICK_REPETITIONS {
        return Some((
            "repetitions",
            format!(
                "{} repetitions in full and {quick} in quick: a plan that is not `deterministic = true` runs at least {MIN_REPETITIONS} (quick: {MIN_QUICK_REPETITIONS}), with real variation (seeded loss, jitter or start offsets)",
                plan.repetitions
            ),
        ));
    }
    None
}

/// Warnings for a valid plan: deprecated keys, and the replication rule in a plan not
/// yet using `[[claims]]`/`[[checks]]` (an error there). Each names the plan file.
pub fn warnings(plan: &Plan, file: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !plan.findings.is_empty() {
        out.push(format!(
            "{file}: [[findings]] is deprecated; its {} entries are read as [[checks]] (see docs/CLAIMS.md)",
            plan.findings.len()
        ));
    }
    if !plan.quick.skip_findings.is_empty() {
        out.push(format!(
            "{file}: [quick] skip_findings is deprecated; use skip = {{ name = \"reason\" }}"
        ));
    }
    if !plan.uses_statements() && !plan.deterministic {
        if let Some((_, why)) = replication_problem(plan) {
            out.push(format!(
                "{file}: {why} (an error once the plan has [[claims]] or [[checks]])"
            ));
        }
    }
    out
}
