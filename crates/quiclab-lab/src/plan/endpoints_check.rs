//! Load-time checks of `[endpoints]` ([`crate::plan::endpoints`]): the stack axis is a
//! text axis whose every value (also under `[quick]`) is "sim" or a named stack,
//! templates name only known placeholders, and the timeout is a positive time.

use crate::error::LabError;
use crate::plan::endpoints::{check_template, Endpoints, SIM};
use crate::plan::locate::line_of_key;
use crate::plan::{AxisValue, Plan};

fn invalid(file: &str, text: &str, section: &str, key: &str, why: String) -> LabError {
    let full = if section.is_empty() {
        key.to_string()
    } else {
        format!("{section}.{key}")
    };
    LabError::Invalid {
        file: file.to_string(),
        line: line_of_key(text, section, key),
        key: full,
        why,
    }
}

/// Checks `plan.endpoints` (nothing to do without it).
pub fn check_endpoints(plan: &Plan, text: &str, file: &str) -> Result<(), LabError> {
    let Some(e) = &plan.endpoints else {
        return Ok(());
    };
    let err = |section: &str, key: &str, why: String| invalid(file, text, section, key, why);
    if e.stacks.is_empty() {
        return Err(err("endpoints", "stacks", "name at least one stack".into()));
    }
    if let Some(name) = e.stacks.keys().find(|n| n.as_str() == SIM) {
        return Err(err(
            "endpoints.stacks",
            name,
            format!("`{SIM}` is the simulator's name; call the stack something else"),
        ));
    }
    if let Some(t) = e.timeout_s {
        if !(t.is_finite() && t > 0.0) {
            return Err(err(
                "endpoints",
                "timeout_s",
                format!("{t} is not a time > 0"),
            ));
        }
    }
    if let Some((name, _)) = e.stacks.iter().find(|(_, s)| s.repetitions == Some(0)) {
        return Err(err(
            &format!("endpoints.stacks.{name}"),
            "repetitions",
            "must be at least 1".into(),
        ));
    }
    for (key, template) in e.templates() {
        if let Err(why) = check_template(template) {
            let (section, leaf) = key.rsplit_once('.').unwrap_or(("", key.as_str()));
            return Err(err(section, leaf, why));
        }
    }
    check_axis(plan, e, &err)
}

/// The stack axis names a text axis whose values are all "sim" or stacks.
fn check_axis(
    plan: &Plan,
    e: &Endpoints,
    err: &dyn Fn(&str, &str, String) -> LabError,
) -> Result<(), LabError> {
    let Some(axis) = &e.axis else {
        if e.stacks.len() != 1 {
            return Err(err(
                "endpoints",
                "axis",
                "several stacks need an `axis` that picks one per point".into(),
            ));
        }
        return Ok(());
    };
    let Some(a) = plan.axes.iter().find(|a| &a.name == axis) else {
        return Err(err("endpoints", "axis", format!("`{axis}` is not an axis")));
    };
    let quick = plan.quick.axes.get(axis).into_iter().flatten();
    for v in a.values.iter().flatten().chain(quick) {
        match v {
            AxisValue::Text(s) if s == SIM || e.stacks.contains_key(s) => {}
            other => {
                let known: Vec<&str> = e.stacks.keys().map(String::as_str).collect();
                return Err(err(
                    "endpoints",
                    "axis",
                    format!(
                        "axis `{axis}` has the value {other:?}; its values must be \
                         \"{SIM}\" or a stack ({})",
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    if a.values.is_none() {
        return Err(err(
            "endpoints",
            "axis",
            format!("`{axis}` must list text values, not a range"),
        ));
    }
    Ok(())
}
