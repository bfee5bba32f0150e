//! Dotted paths with array indices (`links[0].payload_throughput_bps`), used both to
//! read metrics out of a run's result JSON and to write `[set]` keys into a scenario's
//! TOML table. Keys containing dots are not supported (no result or scenario key has one).

use std::fmt;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A parsed path: at least one step, starting with a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path(pub Vec<Seg>);

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl Path {
    /// Parses `a.b[0].c`; the error says what is wrong.
    pub fn parse(s: &str) -> Result<Path, String> {
        let mut segs = Vec::new();
        for part in s.split('.') {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if name.is_empty() || name.contains(']') || name.trim() != name {
                return Err(format!(
                    "bad path `{s}`: empty or malformed key in `{part}`"
                ));
            }
            segs.push(Seg::Key(name.to_string()));
            while !rest.is_empty() {
                let close = rest
                    .find(']')
                    .ok_or_else(|| format!("bad path `{s}`: unclosed `[`"))?;
                let n = rest[1..close].parse::<usize>().map_err(|_| {
                    format!("bad path `{s}`: `{}` is not an index", &rest[..=close])
                })?;
                segs.push(Seg::Index(n));
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return Err(format!("bad path `{s}`: expected `.` or `[` after `]`"));
                }
            }
        }
        Ok(Path(segs))
    }

    /// The number at this path in `v`: `None` if any step is missing or the value is not
    /// a number (null, string, object...).
    pub fn number_in(&self, v: &serde_json::Value) -> Option<f64> {
        let mut cur = v;
        for s in &self.0 {
            cur = match s {
                Seg::Key(k) => cur.as_object()?.get(k)?,
                Seg::Index(i) => cur.as_array()?.get(*i)?,
            };
        }
        cur.as_f64().filter(|x| x.is_finite())
    }

    /// Writes `value` at this path in `table`, creating missing intermediate tables
    /// (array elements must exist). `make` sees the value currently there, if any, and
    /// returns the value to write.
    pub fn write(
        &self,
        table: &mut toml::Table,
        make: impl FnOnce(Option<&toml::Value>) -> Result<toml::Value, String>,
    ) -> Result<(), String> {
        let mut root = toml::Value::Table(std::mem::take(table));
        let r = write_at(&mut root, &self.0, make);
        if let toml::Value::Table(t) = root {
            *table = t;
        }
        r
    }
}

fn write_at(
    cur: &mut toml::Value,
    segs: &[Seg],
    make: impl FnOnce(Option<&toml::Value>) -> Result<toml::Value, String>,
) -> Result<(), String> {
    let (first, rest) = segs.split_first().ok_or("empty path")?;
    match first {
        Seg::Key(k) => {
            let toml::Value::Table(t) = cur else {
                return Err(format!("cannot set `{k}`: its parent is not a table"));
            };
            if rest.is_empty() {
                let v = make(t.get(k))?;
                t.insert(k.clone(), v);
                return Ok(());
            }
            let child = t
                .entry(k.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            write_at(child, rest, make)
        }
        Seg::Index(i) => {
            let toml::Value::Array(a) = cur else {
                return Err(format!("cannot index [{i}]: not an array"));
            };
            let len = a.len();
            let el = a
                .get_mut(*i)
                .ok_or_else(|| format!("index [{i}] out of range (the array has {len})"))?;
            if rest.is_empty() {
                *el = make(Some(el))?;
                return Ok(());
            }
            write_at(el, rest, make)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_read() {
        let p = Path::parse("links[0].x").unwrap();
        assert_eq!(p.to_string(), "links[0].x");
        let v = serde_json::json!({"links": [{"x": 2.5, "s": "a"}], "m": [[1, 2]]});
        assert_eq!(p.number_in(&v), Some(2.5));
        assert_eq!(Path::parse("m[0][1]").unwrap().number_in(&v), Some(2.0));
        assert_eq!(Path::parse("links[1].x").unwrap().number_in(&v), None);
        assert_eq!(Path::parse("links[0].s").unwrap().number_in(&v), None);
        for bad in ["", "a..b", "a[", "a[x]", "a[0]b", ".a"] {
            assert!(Path::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn write_creates_tables() {
        let mut t: toml::Table = "[a]\nx = 1\n[[f]]\ny = 2\n".parse().unwrap();
        Path::parse("a.b.c")
            .unwrap()
            .write(&mut t, |_| Ok(toml::Value::Integer(3)))
            .unwrap();
        Path::parse("f[0].y")
            .unwrap()
            .write(&mut t, |old| {
                assert_eq!(old, Some(&toml::Value::Integer(2)));
                Ok(toml::Value::Integer(4))
            })
            .unwrap();
        assert_eq!(t["a"]["b"]["c"].as_integer(), Some(3));
        assert_eq!(t["f"][0]["y"].as_integer(), Some(4));
        assert!(Path::parse("a.x.z")
            .unwrap()
            .write(&mut t, |_| Ok(toml::Value::Integer(0)))
            .is_err());
        assert!(Path::parse("f[3].y")
            .unwrap()
            .write(&mut t, |_| Ok(toml::Value::Integer(0)))
            .is_err());
    }
}

/// A metric path: a [`Path`] to a number, or `path@from:to` to the mean of a binned
/// series of `[bin start, y]` pairs (such as `flows[0].goodput_series`, whose bin width
/// is the result's `series_interval_s`) over the bins starting in `[from, to)`. Bins
/// absent from the series (no delivery) count as zero: the simulator's
/// `results::window_mean` is the one definition.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricPath {
    pub path: Path,
    pub window: Option<(f64, f64)>,
}

impl MetricPath {
    /// Parses `a.b[0].c` or `a.b[0].c@25:40`; the error says what is wrong.
    pub fn parse(s: &str) -> Result<MetricPath, String> {
        let Some((p, w)) = s.split_once('@') else {
            return Ok(MetricPath {
                path: Path::parse(s)?,
                window: None,
            });
        };
        let bad = || format!("bad window in `{s}`: expected `path@from:to` with from < to");
        let (a, b) = w.split_once(':').ok_or_else(bad)?;
        let (from, to) = (
            a.trim().parse::<f64>().map_err(|_| bad())?,
            b.trim().parse::<f64>().map_err(|_| bad())?,
        );
        if !(from.is_finite() && to.is_finite() && from < to) {
            return Err(bad());
        }
        Ok(MetricPath {
            path: Path::parse(p)?,
            window: Some((from, to)),
        })
    }

    /// The metric's value in a run's result JSON, if present and finite.
    pub fn value_in(&self, v: &serde_json::Value) -> Option<f64> {
        let Some((from, to)) = self.window else {
            return self.path.number_in(v);
        };
        let mut cur = v;
        for s in &self.path.0 {
            cur = match s {
                Seg::Key(k) => cur.as_object()?.get(k)?,
                Seg::Index(i) => cur.as_array()?.get(*i)?,
            };
        }
        let series: Vec<(f64, f64)> = cur
            .as_array()?
            .iter()
            .filter_map(|p| {
                let p = p.as_array()?;
                Some((p.first()?.as_f64()?, p.get(1)?.as_f64()?))
            })
            .collect();
        let interval = v.get("series_interval_s")?.as_f64()?;
        quiclab_sim::results::window_mean(&series, interval, from, to)
    }
}

#[cfg(test)]
mod metric_path_tests {
    use super::MetricPath;

    #[test]
    fn window_mean_of_a_series() {
        // 1 s bins; nothing was delivered in [3, 4), so that bin is absent.
        let v = serde_json::json!({"series_interval_s": 1.0, "flows": [{"goodput_series": [[0.0, 1.0], [1.0, 3.0], [2.0, 5.0], [4.0, 7.0]], "x": 2.5}]});
        let m = MetricPath::parse("flows[0].goodput_series@1:3").unwrap();
        assert_eq!(m.value_in(&v), Some(4.0));
        assert_eq!(
            MetricPath::parse("flows[0].x").unwrap().value_in(&v),
            Some(2.5)
        );
        // Regression: an empty bin counts as zero, it is not skipped (a stall must not
        // be flattered): (5 + 0 + 7) / 3, not (5 + 7) / 2.
        let stall = MetricPath::parse("flows[0].goodput_series@2:5").unwrap();
        assert_eq!(stall.value_in(&v), Some(4.0));
        // A window after the last delivery is zero, not missing.
        assert_eq!(
            MetricPath::parse("flows[0].goodput_series@5:6")
                .unwrap()
                .value_in(&v),
            Some(0.0)
        );
        assert!(MetricPath::parse("a@3:1").is_err());
        assert!(MetricPath::parse("a@x").is_err());
    }
}
