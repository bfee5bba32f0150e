//! Points of a plan and the `[set]` rule: `--quick` overrides, axis values, the points
//! (cartesian or zip), canonical text of values and parameters (for seeds and duplicate
//! checks), and how a `[set]` value is written into a scenario's TOML table.
//!
//! Writing `[set]` values into the base scenario's TOML table follows one rule:
//! - a text axis used alone (`"cc"`) or a quoted literal (`"'exact'"`) writes a
//!   string, except the texts "true" and "false", which write booleans (for switches
//!   such as `pacing`);
//! - a number replacing an existing **integer** must be integral and is written as an
//!   integer (use `round(...)` otherwise); replacing an existing **float** writes a float;
//!   replacing an existing **boolean** takes 0 (false) or 1 (true);
//! - a number at an absent key (or replacing a non-number) is written as an integer if it
//!   is integral (|v| <= 2^53), else as a float. Integers deserialize into float fields
//!   too, so this suits both kinds of scenario keys.

use crate::plan::{Axis, AxisValue, Combine, Plan, Scale};
use std::collections::BTreeMap;

/// The plan as `--quick` runs it: quick repetitions, axis values and `[set]` entries
/// replace the normal ones.
pub fn apply_quick(plan: &Plan) -> Plan {
    let mut p = plan.clone();
    if let Some(r) = plan.quick.repetitions {
        p.repetitions = r;
    }
    for axis in &mut p.axes {
        if let Some(v) = plan.quick.axes.get(&axis.name) {
            axis.values = Some(v.clone());
            axis.range = None;
        }
    }
    for (k, v) in &plan.quick.set {
        p.set.insert(k.clone(), v.clone());
    }
    p.quick_run = true;
    p
}

/// How many values an axis has (without materialising a range).
pub fn axis_len(axis: &Axis) -> usize {
    match (&axis.values, &axis.range) {
        (Some(v), _) => v.len(),
        (None, Some(r)) => r.steps,
        (None, None) => 0,
    }
}

/// An axis's values; range endpoints are exact.
pub fn axis_values(axis: &Axis) -> Vec<AxisValue> {
    if let Some(v) = &axis.values {
        return v.clone();
    }
    let Some(r) = &axis.range else {
        return Vec::new();
    };
    if r.steps <= 1 {
        return vec![AxisValue::Number(r.from)];
    }
    let last = (r.steps - 1) as f64;
    (0..r.steps)
        .map(|i| {
            let t = i as f64 / last;
            let v = if i == 0 {
                r.from
            } else if i == r.steps - 1 {
                r.to
            } else if r.scale == Scale::Log {
                (r.from.ln() + (r.to.ln() - r.from.ln()) * t).exp()
            } else {
                r.from + (r.to - r.from) * t
            };
            AxisValue::Number(v)
        })
        .collect()
}

/// The plan's points in order: cartesian in axis order with the last axis fastest, or
/// zipped.
pub fn points(plan: &Plan) -> Vec<BTreeMap<String, AxisValue>> {
    let values: Vec<Vec<AxisValue>> = plan.axes.iter().map(axis_values).collect();
    if values.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    match plan.combine {
        Combine::Zip => (0..values[0].len())
            .map(|i| {
                plan.axes
                    .iter()
                    .zip(&values)
                    .filter_map(|(a, v)| Some((a.name.clone(), v.get(i)?.clone())))
                    .collect()
            })
            .collect(),
        Combine::Cartesian => {
            let total: usize = values.iter().map(Vec::len).product();
            (0..total)
                .map(|mut n| {
                    let mut p = BTreeMap::new();
                    for (a, v) in plan.axes.iter().zip(&values).rev() {
                        p.insert(a.name.clone(), v[n % v.len()].clone());
                        n /= v.len();
                    }
                    p
                })
                .collect()
        }
    }
}

/// Parameters as one canonical string (sorted names, exact float bits).
pub fn canonical_params(params: &BTreeMap<String, AxisValue>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", canonical_value(v)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `'text'` in a `[set]` or `[cases]` entry: a literal string (or switch) to write.
pub(crate) fn quoted_text(src: &str) -> Option<&str> {
    let t = src.trim();
    (t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'')).then(|| &t[1..t.len() - 1])
}

/// Numbers for expressions: the point's numeric axes.
pub(crate) fn numeric_vars(params: &BTreeMap<String, AxisValue>) -> BTreeMap<String, f64> {
    params
        .iter()
        .filter_map(|(k, v)| match v {
            AxisValue::Number(n) => Some((k.clone(), *n)),
            AxisValue::Text(_) => None,
        })
        .collect()
}

/// The TOML value a `[set]` number becomes (see the module docs).
pub(crate) fn number_value(old: Option<&toml::Value>, v: f64) -> Result<toml::Value, String> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    let integral = v.fract() == 0.0 && v.abs() <= EXACT;
    match old {
        Some(toml::Value::Integer(_)) if integral => Ok(toml::Value::Integer(v as i64)),
        Some(toml::Value::Integer(i)) => Err(format!(
            "the base scenario has the integer {i} here, but the expression gives {v} (use round(...))"
        )),
        Some(toml::Value::Float(_)) => Ok(toml::Value::Float(v)),
        // A switch (e.g. `server.handshake.instant_ack`) swept by a 0/1 axis.
        Some(toml::Value::Boolean(_)) if v == 0.0 || v == 1.0 => Ok(toml::Value::Boolean(v == 1.0)),
        Some(toml::Value::Boolean(_)) => Err(format!(
            "the base scenario has a boolean here, but the expression gives {v} (use 0 or 1)"
        )),
        _ if integral => Ok(toml::Value::Integer(v as i64)),
        _ => Ok(toml::Value::Float(v)),
    }
}

/// A value as text that distinguishes numbers from strings and is exact for floats.
pub fn canonical_value(v: &AxisValue) -> String {
    match v {
        AxisValue::Number(n) => format!("n:{:016x}", (n + 0.0).to_bits()),
        AxisValue::Text(s) => format!("s:{s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Range;

    fn axis(name: &str, values: &[f64]) -> Axis {
        Axis {
            name: name.into(),
            values: Some(values.iter().map(|v| AxisValue::Number(*v)).collect()),
            range: None,
            label: None,
            value_labels: BTreeMap::new(),
        }
    }

    #[test]
    fn ranges() {
        let mut a = axis("x", &[]);
        a.values = None;
        a.range = Some(Range {
            from: 1.0,
            to: 100.0,
            steps: 3,
            scale: Scale::Log,
        });
        let v = axis_values(&a);
        assert_eq!(v[0], AxisValue::Number(1.0));
        assert_eq!(v[2], AxisValue::Number(100.0));
        let AxisValue::Number(mid) = v[1] else {
            panic!()
        };
        assert!((mid - 10.0).abs() < 1e-12);
        a.range.as_mut().unwrap().scale = Scale::Linear;
        assert_eq!(axis_values(&a)[1], AxisValue::Number(50.5));
    }

    #[test]
    fn number_rule() {
        let i = toml::Value::Integer(1);
        let f = toml::Value::Float(1.0);
        assert_eq!(number_value(Some(&i), 3.0), Ok(toml::Value::Integer(3)));
        assert!(number_value(Some(&i), 2.5).is_err());
        assert_eq!(number_value(Some(&f), 3.0), Ok(toml::Value::Float(3.0)));
        assert_eq!(number_value(None, 3.0), Ok(toml::Value::Integer(3)));
        assert_eq!(number_value(None, 0.5), Ok(toml::Value::Float(0.5)));
    }
}
