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
//!
//! The same rule applies a single `key = value` override to a scenario ([`apply_set`],
//! `quiclab sim run --set`): there are no axes, so the value is a `'text'` literal or an
//! expression over numbers only (`2*20`).

use crate::error::LabError;
use crate::expr::{Expr, ExprError, ExprErrorKind};
use crate::plan::path::Path as KeyPath;
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
fn number_value(old: Option<&toml::Value>, v: f64) -> Result<toml::Value, String> {
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

/// Why a `[set]` entry could not be written.
#[derive(Debug)]
pub(crate) enum SetError {
    /// The value is not a `'text'` literal and does not parse or evaluate as an
    /// expression over the point's numeric axes.
    Expr(ExprError),
    /// The key path does not parse, or the value does not fit the key (see the module
    /// docs), or is not finite.
    Invalid(String),
}

/// Writes the `[set]` entry `key = src` into `table` at a point with axis values
/// `params`, by the rule of the module docs. The one implementation behind plan
/// expansion and [`apply_set`].
pub(crate) fn write_set(
    table: &mut toml::Table,
    key: &str,
    src: &str,
    params: &BTreeMap<String, AxisValue>,
) -> Result<(), SetError> {
    let path = KeyPath::parse(key).map_err(SetError::Invalid)?;
    // A quoted literal or a text axis used alone writes text; anything else is a number.
    let text = match quoted_text(src) {
        Some(t) => Ok(t.to_string()),
        None => {
            let expr = Expr::parse(src).map_err(SetError::Expr)?;
            match expr.as_variable().and_then(|v| params.get(v)) {
                Some(AxisValue::Text(s)) => Ok(s.clone()),
                _ => Err(expr),
            }
        }
    };
    let write = match text {
        // "true"/"false" are switches (no scenario key takes them as strings).
        Ok(s) => path.write(table, |_| {
            Ok(match s.as_str() {
                "true" => toml::Value::Boolean(true),
                "false" => toml::Value::Boolean(false),
                _ => toml::Value::String(s),
            })
        }),
        Err(expr) => {
            let v = expr
                .eval(&numeric_vars(params))
                .map_err(|e| match &e.kind {
                    ExprErrorKind::UnknownVariable(n) if params.contains_key(n) => {
                        SetError::Invalid(format!(
                            "axis `{n}` has a text value here; a text axis can only be used alone"
                        ))
                    }
                    _ => SetError::Expr(e),
                })?;
            if !v.is_finite() {
                return Err(SetError::Invalid(format!("`{src}` evaluates to {v}")));
            }
            path.write(table, |old| number_value(old, v))
        }
    };
    write.map_err(SetError::Invalid)
}

/// Applies one scenario override `key = value_src` to a scenario's TOML `table`, with the
/// value syntax of a plan's `[set]` without axes: `'text'` (`'true'`/`'false'` are
/// switches), or an expression over numbers (`33`, `2*20`, `1e6`), written as an integer
/// or float by the type of the value it replaces. `key` is a dotted path
/// (`topology.forward.delay_ms`, `flows[0].bytes`). Errors name the key: a path that
/// does not parse, a value that is no number or expression (text must be quoted), or a
/// number that does not fit the existing value (2.5 for an integer key). Whether the key
/// exists in the scenario schema is checked by parsing the resulting scenario
/// (`quiclab_sim::scenario::Scenario::parse`), whose error names the unknown key.
pub fn apply_set(table: &mut toml::Table, key: &str, value_src: &str) -> Result<(), LabError> {
    write_set(table, key, value_src, &BTreeMap::new()).map_err(|e| LabError::Set {
        key: key.to_string(),
        value: value_src.to_string(),
        why: match e {
            SetError::Expr(e) => match &e.kind {
                ExprErrorKind::UnknownVariable(n) => format!(
                    "`{n}` is not a number or an expression over numbers (write text as '{n}')"
                ),
                _ => format!("`{value_src}` {e}"),
            },
            SetError::Invalid(why) => why,
        },
    })
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

    fn scenario_table() -> toml::Table {
        toml::from_str(
            "[topology.forward]\ndelay_ms = 20\nloss = 0.0\n[server]\npacing = false\ncc = \"newreno\"\n",
        )
        .unwrap()
    }

    fn at<'a>(t: &'a toml::Table, a: &str, b: &str) -> &'a toml::Value {
        &t[a].as_table().unwrap()[b]
    }

    #[test]
    fn apply_set_follows_the_set_rule() {
        let mut t = scenario_table();
        apply_set(&mut t, "topology.forward.delay_ms", "2*20").unwrap();
        assert_eq!(
            at(&t, "topology", "forward")["delay_ms"],
            toml::Value::Integer(40)
        );
        apply_set(&mut t, "topology.forward.loss", "1").unwrap();
        assert_eq!(
            at(&t, "topology", "forward")["loss"],
            toml::Value::Float(1.0)
        );
        apply_set(&mut t, "server.pacing", "'true'").unwrap();
        assert_eq!(at(&t, "server", "pacing"), &toml::Value::Boolean(true));
        apply_set(&mut t, "server.pacing", "0").unwrap();
        assert_eq!(at(&t, "server", "pacing"), &toml::Value::Boolean(false));
        apply_set(&mut t, "server.cc", "'cubic'").unwrap();
        assert_eq!(at(&t, "server", "cc"), &toml::Value::String("cubic".into()));
        // An absent key: integral numbers become integers, others floats.
        apply_set(&mut t, "server.initial_window", "10").unwrap();
        assert_eq!(
            at(&t, "server", "initial_window"),
            &toml::Value::Integer(10)
        );
        apply_set(&mut t, "server.beta", "0.7").unwrap();
        assert_eq!(at(&t, "server", "beta"), &toml::Value::Float(0.7));
    }

    #[test]
    fn apply_set_errors_name_the_key() {
        let bad = |key: &str, value: &str| {
            let mut t = scenario_table();
            let e = apply_set(&mut t, key, value).unwrap_err();
            assert!(
                matches!(&e, LabError::Set { key: k, value: v, .. } if k == key && v == value),
                "{e:?}"
            );
            assert_eq!(
                t,
                scenario_table(),
                "a failed override leaves the table as it was"
            );
            e.to_string()
        };
        let e = bad("topology.forward.delay_ms", "abc");
        assert!(e.starts_with("topology.forward.delay_ms=abc: "), "{e}");
        assert!(e.contains("'abc'"), "{e}");
        let e = bad("topology.forward.delay_ms", "2.5");
        assert!(e.contains("integer 20") && e.contains("2.5"), "{e}");
        assert!(bad("topology.forward.delay_ms", "1/0").contains("inf"));
        assert!(bad("topology.forward.delay_ms", "2 *").contains("topology.forward.delay_ms"));
        assert!(bad("server.pacing", "2").contains("0 or 1"));
        assert!(bad("topology..delay_ms", "1").starts_with("topology..delay_ms=1: "));
    }
}
