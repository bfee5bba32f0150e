//! Plan checks that the schema cannot express, run at load time so a sweep fails before
//! its first run, not halfway: axes, ranges, names, references between sections,
//! expression syntax and variables, metric paths, and the quick overrides.

use crate::error::LabError;
use crate::expr::Expr;
use crate::plan::endpoints_check::check_endpoints;
use crate::plan::locate::{line_of_entry, line_of_key, Ctx};
use crate::plan::path::{MetricPath, Path as KeyPath};
use crate::plan::points::{
    apply_quick, axis_len, canonical_params, canonical_value, points, quoted_text,
};
use crate::plan::validate_statements::check_statements;
use crate::plan::{AxisValue, Combine, Plan, Scale};
use std::collections::{BTreeMap, BTreeSet};

/// Column names the result files use for their own fields.
const RESERVED: [&str; 4] = ["point", "rep", "seed", "key"];
/// Upper bound on runs per plan: a typo in a range must not allocate the world.
const MAX_RUNS: usize = 10_000_000;
const FIGURE_KINDS: [&str; 5] = ["lines", "scatter", "cdf", "bars", "timeseries"];

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl Ctx<'_> {
    fn expr(
        &self,
        section: &str,
        key: &str,
        src: &str,
        known: &BTreeSet<String>,
    ) -> Result<(), LabError> {
        if quoted_text(src).is_some() {
            return Ok(());
        }
        let e = Expr::parse(src).and_then(|e| e.check_variables(known).map(|_| e));
        e.map(|_| ()).map_err(|source| LabError::Expr {
            file: self.file.to_string(),
            line: line_of_key(self.text, section, key),
            key: format!("{section}.{key}"),
            expr: src.to_string(),
            source: Box::new(source),
        })
    }
}

/// Checks everything about a plan that can be checked without running it. `text` is the
/// plan's source (for line numbers; may be empty).
pub fn validate(plan: &Plan, text: &str, file: &str) -> Result<(), LabError> {
    let cx = Ctx { file, text };
    if plan.repetitions == 0 {
        return Err(cx.top("repetitions", "must be at least 1"));
    }
    if plan.quick.repetitions == Some(0) {
        return Err(cx.invalid(
            line_of_key(text, "quick", "repetitions"),
            "quick.repetitions",
            "must be at least 1",
        ));
    }
    if plan.axes.is_empty() {
        return Err(cx.top("axes", "a plan needs at least one axis"));
    }
    let names = check_axes(&cx, plan)?;
    check_quick_axes(&cx, plan, &names)?;
    check_metrics(&cx, plan, &names)?;
    check_settings(&cx, plan, &names)?;
    check_expected(&cx, plan, &names)?;
    check_figures(&cx, plan, &names)?;
    if let Some(a) = plan
        .common_random_numbers
        .iter()
        .find(|a| !names.contains(*a))
    {
        return Err(cx.top("common_random_numbers", format!("`{a}` is not an axis")));
    }
    check_statements(&cx, plan, &names)?;
    check_endpoints(plan, text, file)?;
    check_points(&cx, plan, "")?;
    check_points(&cx, &apply_quick(plan), "quick: ")
}

/// Axes have distinct identifier names and exactly one of a valid value list or range;
/// returns the names.
fn check_axes(cx: &Ctx, plan: &Plan) -> Result<BTreeSet<String>, LabError> {
    let mut names = BTreeSet::new();
    for (i, a) in plan.axes.iter().enumerate() {
        if !is_ident(&a.name) || RESERVED.contains(&a.name.as_str()) {
            return Err(cx.axis(
                i,
                &a.name,
                "name",
                "must be an identifier (letters, digits, _) other than point, rep, seed, key",
            ));
        }
        if !names.insert(a.name.clone()) {
            return Err(cx.axis(i, &a.name, "name", "duplicate axis name"));
        }
        match (&a.values, &a.range) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(cx.axis(
                    i,
                    &a.name,
                    "values",
                    "needs exactly one of `values` and `range`",
                ))
            }
            (Some(v), None) => check_values(cx, i, &a.name, "values", v)?,
            (None, Some(r)) => {
                if !(r.from.is_finite() && r.to.is_finite()) {
                    return Err(cx.axis(i, &a.name, "range", "from and to must be finite"));
                }
                if r.steps == 0 || (r.steps == 1 && r.from != r.to) {
                    return Err(cx.axis(
                        i,
                        &a.name,
                        "range.steps",
                        "must be at least 1, and at least 2 when from != to",
                    ));
                }
                if r.steps > MAX_RUNS {
                    return Err(cx.axis(i, &a.name, "range.steps", format!("at most {MAX_RUNS}")));
                }
                if r.scale == Scale::Log && !(r.from > 0.0 && r.to > 0.0) {
                    return Err(cx.axis(
                        i,
                        &a.name,
                        "range",
                        "a log range needs positive from and to",
                    ));
                }
            }
        }
    }
    Ok(names)
}

/// `[quick.axes]` replace existing axes with valid value lists.
fn check_quick_axes(cx: &Ctx, plan: &Plan, names: &BTreeSet<String>) -> Result<(), LabError> {
    for (name, v) in &plan.quick.axes {
        let line = line_of_key(cx.text, "quick.axes", name);
        if !names.contains(name) {
            return Err(cx.invalid(line, format!("quick.axes.{name}"), "no such axis"));
        }
        check_values(cx, 0, name, "quick", v).map_err(|_| {
            cx.invalid(
                line,
                format!("quick.axes.{name}"),
                "needs at least one value, all numbers finite and distinct",
            )
        })?;
    }
    Ok(())
}

/// Metrics are identifiers apart from the axes, each a result path or a derived
/// expression over path metrics and numeric axes.
fn check_metrics(cx: &Ctx, plan: &Plan, names: &BTreeSet<String>) -> Result<(), LabError> {
    if plan.metrics.is_empty() {
        return Err(cx.top("metrics", "a plan needs at least one metric"));
    }
    for (m, p) in &plan.metrics {
        let line = line_of_key(cx.text, "metrics", m);
        if !is_ident(m) || RESERVED.contains(&m.as_str()) || names.contains(m) {
            return Err(cx.invalid(line, format!("metrics.{m}"), "metric names must be identifiers, distinct from axis names and from point, rep, seed, key"));
        }
        match p.trim().strip_prefix('=') {
            // A derived metric: an expression over path metrics and numeric axes.
            Some(e) => {
                let mut known = names.clone();
                known.extend(
                    plan.metrics
                        .iter()
                        .filter(|(_, src)| !src.trim().starts_with('='))
                        .map(|(k, _)| k.clone()),
                );
                cx.expr("metrics", m, e, &known)?;
            }
            None => {
                MetricPath::parse(p)
                    .map_err(|why| cx.invalid(line, format!("metrics.{m}"), why))?;
            }
        }
    }
    Ok(())
}

/// `[set]`, `[cases]` and `[quick.set]`: key paths that parse, expressions over the
/// axes, cases for text values that exist, and no seed.
fn check_settings(cx: &Ctx, plan: &Plan, names: &BTreeSet<String>) -> Result<(), LabError> {
    for (key, src) in &plan.set {
        check_set_key(cx, "set", key)?;
        cx.expr("set", key, src, names)?;
    }
    for (axis, cases) in &plan.cases {
        let Some(a) = plan.axes.iter().find(|a| &a.name == axis) else {
            return Err(cx.top("cases", format!("`{axis}` is not an axis")));
        };
        let values = a.values.as_deref().unwrap_or_default();
        for (value, entries) in cases {
            if !values
                .iter()
                .any(|v| matches!(v, AxisValue::Text(t) if t == value))
            {
                return Err(cx.top(
                    "cases",
                    format!("axis `{axis}` has no text value \"{value}\""),
                ));
            }
            let section = format!("cases.{axis}.\"{value}\"");
            for (key, src) in entries {
                check_set_key(cx, &section, key)?;
                cx.expr(&section, key, src, names)?;
            }
        }
    }
    for (key, src) in &plan.quick.set {
        check_set_key(cx, "quick.set", key)?;
        cx.expr("quick.set", key, src, names)?;
    }
    if plan.set.contains_key("seed") || plan.quick.set.contains_key("seed") {
        return Err(cx.invalid(
            line_of_key(cx.text, "set", "seed"),
            "set.seed",
            "the seed is derived from master_seed; it cannot be set",
        ));
    }
    Ok(())
}

/// `[expected]` names metrics with expressions over the axes; the tolerance is sane.
fn check_expected(cx: &Ctx, plan: &Plan, names: &BTreeSet<String>) -> Result<(), LabError> {
    for (m, src) in &plan.expected {
        if !plan.metrics.contains_key(m) {
            return Err(cx.invalid(
                line_of_key(cx.text, "expected", m),
                format!("expected.{m}"),
                "no such metric",
            ));
        }
        cx.expr("expected", m, src, names)?;
    }
    if plan.tolerance.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
        return Err(cx.top("tolerance", "must be a non-negative number"));
    }
    Ok(())
}

/// Figures have a known kind and name axes, metrics and expectations that exist.
fn check_figures(cx: &Ctx, plan: &Plan, names: &BTreeSet<String>) -> Result<(), LabError> {
    for (i, f) in plan.figures.iter().enumerate() {
        let at = |field: &str, why: String| {
            cx.invalid(
                line_of_entry(cx.text, "figures", i, &f.file),
                format!("figures[{i}] ({}).{field}", f.file),
                why,
            )
        };
        if !FIGURE_KINDS.contains(&f.kind.as_str()) {
            return Err(at(
                "kind",
                format!("`{}` is not one of {}", f.kind, FIGURE_KINDS.join(", ")),
            ));
        }
        for (field, axis) in [("x", &f.x), ("series", &f.series)] {
            if let Some(a) = axis {
                if !names.contains(a) {
                    return Err(at(field, format!("`{a}` is not an axis")));
                }
            }
        }
        // A time series plots a run's series, not a metric, so its `y` is free-form.
        if f.kind != "timeseries" && !plan.metrics.contains_key(&f.y) {
            return Err(at("y", format!("`{}` is not a metric", f.y)));
        }
        if f.expected && !plan.expected.contains_key(&f.y) {
            return Err(at("expected", format!("no [expected] entry for `{}`", f.y)));
        }
        if let Some(a) = f.filter.keys().find(|a| !names.contains(*a)) {
            return Err(at("filter", format!("`{a}` is not an axis")));
        }
    }
    Ok(())
}

fn check_values(
    cx: &Ctx,
    i: usize,
    name: &str,
    field: &str,
    v: &[AxisValue],
) -> Result<(), LabError> {
    if v.is_empty() {
        return Err(cx.axis(i, name, field, "an axis needs at least one value"));
    }
    if v.iter()
        .any(|x| matches!(x, AxisValue::Number(n) if !n.is_finite()))
    {
        return Err(cx.axis(i, name, field, "numbers must be finite"));
    }
    let canon: BTreeSet<String> = v.iter().map(canonical_value).collect();
    if canon.len() != v.len() {
        return Err(cx.axis(
            i,
            name,
            field,
            "duplicate value (two points would be the same runs)",
        ));
    }
    Ok(())
}

fn check_set_key(cx: &Ctx, section: &str, key: &str) -> Result<(), LabError> {
    KeyPath::parse(key).map(|_| ()).map_err(|why| {
        cx.invalid(
            line_of_key(cx.text, section, key),
            format!("{section}.{key}"),
            why,
        )
    })
}

/// Counts points (cartesian: product with overflow check; zip: equal lengths) before
/// materialising them.
fn check_points(cx: &Ctx, plan: &Plan, prefix: &str) -> Result<(), LabError> {
    let lens: Vec<usize> = plan.axes.iter().map(axis_len).collect();
    let n = match plan.combine {
        Combine::Cartesian => lens.iter().try_fold(1usize, |a, &l| a.checked_mul(l)),
        Combine::Zip => {
            if let Some(i) = lens.iter().position(|&l| l != lens[0]) {
                let a = &plan.axes[i];
                return Err(cx.axis(i, &a.name, "values", format!("{prefix}with combine = \"zip\" every axis needs the same number of values ({} has {}, {} has {})", plan.axes[0].name, lens[0], a.name, lens[i])));
            }
            Some(lens[0])
        }
    };
    let runs = n.and_then(|n| n.checked_mul(plan.repetitions as usize));
    if runs.is_none_or(|r| r > MAX_RUNS) {
        return Err(cx.top("axes", format!("{prefix}more than {MAX_RUNS} runs")));
    }
    if plan.combine == Combine::Zip {
        let mut seen = BTreeMap::new();
        for (i, p) in points(plan).iter().enumerate() {
            let canon = canonical_params(p);
            if let Some(j) = seen.insert(canon, i) {
                return Err(cx.top(
                    "axes",
                    format!("{prefix}points {j} and {i} have the same values"),
                ));
            }
        }
    }
    Ok(())
}
