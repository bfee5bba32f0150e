//! What a finding claims and what the seed published, as typed values: a one-sided
//! bound or a two-sided band on a relative change, the verdict words, and the seed's
//! number with its precision. Parsed and validated with the plan; judged by
//! `present::verdict`.

/// What a finding claims about a change (a fraction: 0.1 = +10%).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Claim {
    /// The change is below the bound (`expect = "lower"` is `Below(0)`).
    Below(f64),
    /// The change is above the bound (`expect = "higher"` is `Above(0)`).
    Above(f64),
    /// The change lies in `[lo, hi]` (`within = x` is `[-x, x]`).
    Between(f64, f64),
}

impl Claim {
    /// Parses an `expect` string: "lower", "higher", "< x", "> x".
    pub fn parse_expect(s: &str) -> Result<Claim, String> {
        let t = s.trim();
        let bound = |rest: &str| {
            rest.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("`{s}`: `{}` is not a number", rest.trim()))
        };
        match t {
            "lower" => Ok(Claim::Below(0.0)),
            "higher" => Ok(Claim::Above(0.0)),
            _ if t.starts_with('<') => bound(&t[1..]).map(Claim::Below),
            _ if t.starts_with('>') => bound(&t[1..]).map(Claim::Above),
            _ => Err(format!(
                "`{s}`: expected \"lower\", \"higher\", \"< x\" or \"> x\""
            )),
        }
    }

    /// `within = x`: |change| <= x, for x a finite fraction >= 0.
    pub fn within(x: f64) -> Result<Claim, String> {
        if x.is_finite() && x >= 0.0 {
            Ok(Claim::Between(-x, x))
        } else {
            Err(format!("{x} is not a finite fraction >= 0"))
        }
    }

    /// `between = [lo, hi]`, finite with lo <= hi.
    pub fn between(lo: f64, hi: f64) -> Result<Claim, String> {
        if lo.is_finite() && hi.is_finite() && lo <= hi {
            Ok(Claim::Between(lo, hi))
        } else {
            Err(format!(
                "[{lo}, {hi}] is not a finite interval with lo <= hi"
            ))
        }
    }

    /// Whether one value satisfies the claim.
    pub fn satisfied_by(self, x: f64) -> bool {
        match self {
            Claim::Below(b) => x < b,
            Claim::Above(b) => x > b,
            Claim::Between(lo, hi) => (lo..=hi).contains(&x),
        }
    }

    /// The verdict for an interval `[lo, hi]` of plausible values.
    pub fn judge_interval(self, lo: f64, hi: f64) -> Verdict {
        let (inside, outside) = match self {
            Claim::Below(b) => (hi < b, lo >= b),
            Claim::Above(b) => (lo > b, hi <= b),
            Claim::Between(a, b) => (a <= lo && hi <= b, hi < a || lo > b),
        };
        if inside {
            Verdict::Holds
        } else if outside {
            Verdict::Fails
        } else {
            Verdict::Inconclusive
        }
    }

    /// The claim in words for a report: "< -5%", "in [25%, 50%]", "within ±1%".
    pub fn describe(self) -> String {
        let pct = |x: f64| format!("{}%", trim_float(x * 100.0));
        match self {
            Claim::Below(b) => format!("< {}", pct(b)),
            Claim::Above(b) => format!("> {}", pct(b)),
            Claim::Between(lo, hi) if lo == -hi => format!("within ±{}", pct(hi)),
            Claim::Between(lo, hi) => format!("in [{}, {}]", pct(lo), pct(hi)),
        }
    }
}

/// A number without float noise: 5 not 5.000000000000001.
fn trim_float(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A finding's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Holds,
    Inconclusive,
    Fails,
    NoData,
    /// Not judged: `[quick] skip_findings` leaves it out of a quick run on purpose.
    LeftOut,
}

impl Verdict {
    /// The word used in reports and `findings.csv`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Fails => "fails",
            Verdict::NoData => "no data",
            Verdict::LeftOut => "left out (quick)",
        }
    }

    /// Whether the verdict makes `quiclab reproduce` / `lab run` exit non-zero: a claim
    /// that fails or that has no data.
    pub fn is_failure(self) -> bool {
        matches!(self, Verdict::Fails | Verdict::NoData)
    }
}

/// A number the seed document publishes for a finding.
#[derive(Clone, Debug, PartialEq)]
pub enum Published {
    /// A relative change (of / against - 1), with the precision the seed states it to
    /// (e.g. -0.062 ± 0.0005 for "6.2%").
    Change { value: f64, precision: f64 },
    /// A range of relative changes ("25-50%").
    Between(f64, f64),
    /// An absolute value of the metric for the `of` points, in `unit`, with its
    /// precision.
    Value {
        value: f64,
        precision: f64,
        unit: String,
    },
}

impl Published {
    /// The interval of values the published number stands for.
    pub fn interval(&self) -> (f64, f64) {
        match self {
            Published::Change { value, precision }
            | Published::Value {
                value, precision, ..
            } => (value - precision, value + precision),
            Published::Between(lo, hi) => (*lo, *hi),
        }
    }

    /// Whether our range (CI, or the pairs' range for single runs) and the published
    /// interval overlap: the seed's number is plausible given our result.
    pub fn agrees_with(&self, ours: (f64, f64)) -> bool {
        let (a, b) = self.interval();
        ours.0 <= b && a <= ours.1
    }

    /// The published number as the report shows it.
    pub fn describe(&self) -> String {
        let pct = |x: f64| format!("{:+.1}%", x * 100.0);
        match self {
            Published::Change { value, .. } => pct(*value),
            Published::Between(lo, hi) => format!("{} to {}", pct(*lo), pct(*hi)),
            Published::Value { value, unit, .. } => format!("{} {unit}", trim_float(*value)),
        }
    }
}
