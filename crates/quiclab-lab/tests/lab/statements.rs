//! Claims and checks (docs/CLAIMS.md) judged on synthetic result tables: a claim that is
//! false is "not reproduced" and does not gate, a check that is false gates, a sweep
//! check fails at the point that fails and names it, equality is two-sided, a
//! deterministic comparison has one value and no interval, the statistic and the
//! aggregation change what is tested, and bad statements are errors naming the key.

use quiclab_lab::csv::{parse, Table};
use quiclab_lab::plan::load::{load_plan, plan_warnings};
use quiclab_lab::plan::Plan;
use quiclab_lab::present::judge::ClaimStatus;
use quiclab_lab::present::report::write_report;
use quiclab_lab::present::statements::{evaluate, gate, CheckVerdict, Evaluation};
use std::path::{Path, PathBuf};

/// A plan over `ratio` (1, 2, 10) and `rtt` (10, 20) with one metric `tp` and its
/// analytic value, then `extra` (keys and statements).
fn plan_text(head: &str, extra: &str) -> String {
    format!(
        r#"name = "t"
title = "Synthetic"
question = "q"
base = "b.toml"
master_seed = 1
{head}

[[axes]]
name = "ratio"
values = [1, 2, 10]

[[axes]]
name = "rtt"
values = [10, 20]

[metrics]
tp = "links[0].payload_throughput_bps"

[expected]
tp = "1000 / rtt"
{extra}
"#
    )
}

const DETERMINISTIC: &str = "deterministic = true";
const REPLICATED: &str = "repetitions = 10\n[quick]\nrepetitions = 5";

/// A fresh directory under the target dir.
fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("statements-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The plan, parsed and validated like a plan file.
fn plan(name: &str, text: &str) -> Plan {
    let d = tmpdir(name);
    std::fs::write(d.join("plan.toml"), text).unwrap();
    load_plan(&d.join("plan.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The error of loading a plan file.
fn error(name: &str, text: &str) -> String {
    let d = tmpdir(name);
    std::fs::write(d.join("plan.toml"), text).unwrap();
    load_plan(&d.join("plan.toml")).unwrap_err().to_string()
}

/// runs.csv from (ratio, rtt, [tp per repetition]), points numbered in order.
fn runs(points: &[(u32, u32, &[f64])]) -> Table {
    parse(&runs_text(points), "runs.csv").unwrap()
}

fn runs_text(points: &[(u32, u32, &[f64])]) -> String {
    let mut t = String::from("point,rep,ratio,rtt,tp\n");
    for (i, (ratio, rtt, tps)) in points.iter().enumerate() {
        for (rep, tp) in tps.iter().enumerate() {
            t += &format!("{i},{rep},{ratio},{rtt},{tp}\n");
        }
    }
    t
}

/// summary.csv with `tp_expected` = 1000 / rtt per point (means unused here).
fn summary_text(points: &[(u32, u32, &[f64])]) -> String {
    let mut t = String::from("point,ratio,rtt,tp_n,tp_mean,tp_median,tp_p5,tp_p95,tp_ci_lo,tp_ci_hi,tp_expected,tp_deviation\n");
    for (i, (ratio, rtt, tps)) in points.iter().enumerate() {
        let m = tps.iter().sum::<f64>() / tps.len() as f64;
        let e = 1000.0 / *rtt as f64;
        t += &format!(
            "{i},{ratio},{rtt},{},{m},{m},{m},{m},{m},{m},{e},{}\n",
            tps.len(),
            m / e - 1.0
        );
    }
    t
}

fn eval(p: &Plan, points: &[(u32, u32, &[f64])]) -> Evaluation {
    let summary = parse(&summary_text(points), "summary.csv").unwrap();
    evaluate(p, &runs(points), &summary).unwrap()
}

/// A results directory (plan.toml, runs.csv, summary.csv) with its report written.
fn results_dir(name: &str, text: &str, points: &[(u32, u32, &[f64])]) -> PathBuf {
    let d = tmpdir(name);
    std::fs::write(d.join("plan.toml"), text).unwrap();
    std::fs::write(d.join("runs.csv"), runs_text(points)).unwrap();
    std::fs::write(d.join("summary.csv"), summary_text(points)).unwrap();
    write_report(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

/// Deterministic runs where ratio 10 has 10% less throughput than ratio 1 at both RTTs.
const LOWER: [(u32, u32, &[f64]); 6] = [
    (1, 10, &[100.0]),
    (1, 20, &[50.0]),
    (2, 10, &[99.0]),
    (2, 20, &[49.5]),
    (10, 10, &[90.0]),
    (10, 20, &[45.0]),
];

const CLAIM_HIGHER: &str = r#"
[[claims]]
name = "r10_higher"
source = "002"
where = "Fig. 7"
claim = "1:10 raises throughput (false here)"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "higher"
statistic = "ratio of means"
"#;

const CHECK_HIGHER: &str = r#"
[[checks]]
name = "r10_higher_check"
check = "1:10 raises throughput (false here)"
basis = "model prediction"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "higher"
"#;

#[test]
fn a_false_claim_is_not_reproduced_and_does_not_gate() {
    let text = plan_text(DETERMINISTIC, CLAIM_HIGHER);
    let dir = results_dir("false-claim", &text, &LOWER);
    let g = gate(std::slice::from_ref(&dir)).unwrap();
    assert!(g.failing.is_empty(), "{:?}", g.failing);
    assert_eq!(g.claims["002"].get(ClaimStatus::NotReproduced), 1);
    assert_eq!(
        g.summary_lines(),
        ["claims by source:", "  seed 002: QUIC in the INET simulation suite: 0 reproduced, 0 direction only, 1 not reproduced, 0 inconclusive, 0 not run"]
    );
    let csv = std::fs::read_to_string(dir.join("claims.csv")).unwrap();
    assert!(
        csv.contains("r10_higher,002,Fig. 7,not reproduced,"),
        "{csv}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("## Claims") && !report.contains("## Checks"),
        "{report}"
    );
}

#[test]
fn a_false_check_gates() {
    let text = plan_text(DETERMINISTIC, CHECK_HIGHER);
    let dir = results_dir("false-check", &text, &LOWER);
    let g = gate(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(g.checks.get(CheckVerdict::Fails), 1);
    assert_eq!(g.failing.len(), 1);
    assert!(
        g.failing[0].contains("r10_higher_check: fails"),
        "{:?}",
        g.failing
    );
    assert_eq!(
        g.summary_lines(),
        ["checks: 0 hold, 1 fail, 0 inconclusive, 0 no data, 0 not run"]
    );
}

#[test]
fn a_sweep_check_with_one_failing_point_fails_and_names_it() {
    let text = plan_text(
        DETERMINISTIC,
        r#"
[[checks]]
name = "r10_lower"
check = "1:10 lowers throughput at every RTT"
basis = "model prediction"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "lower"
"#,
    );
    let mut points = LOWER;
    points[5] = (10, 20, &[51.0]);
    let dir = results_dir("one-point", &text, &points);
    let e = quiclab_lab::present::statements::evaluate_dir(&dir).unwrap();
    let c = &e.checks[0];
    assert_eq!(c.verdict, CheckVerdict::Fails);
    assert_eq!(c.reason, "fails at rtt = 20", "{c:?}");
    let pts = std::fs::read_to_string(dir.join("checks_points.csv")).unwrap();
    assert!(
        pts.contains("r10_lower,rtt = 10,holds,1,-0.1,,,deterministic,"),
        "{pts}"
    );
    assert!(
        pts.contains("r10_lower,rtt = 20,fails,1,0.02,,,deterministic,"),
        "{pts}"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("| rtt = 20 | 1 | +2.0% (deterministic) | fails |"),
        "{report}"
    );
    // The same data pooled (with a reason) hides the failing point: -4% overall.
    let pooled = text.replace(
        "expect = \"lower\"",
        "expect = \"lower\"\naggregate = \"pooled\"\npooled_because = \"to show what pooling hides\"",
    );
    let e = eval(&plan("one-point-pooled", &pooled), &points);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Holds);
}

#[test]
fn equality_is_two_sided() {
    let same = |band: &str| {
        plan_text(
            DETERMINISTIC,
            &format!(
                r#"
[[checks]]
name = "same"
check = "1:2 gives the throughput of 1:1"
basis = "model bound"
metric = "tp"
of = {{ ratio = 2 }}
against = {{ ratio = 1 }}
{band}
"#
            ),
        )
    };
    let with = |r2: [f64; 2]| -> [(u32, u32, &'static [f64]); 4] {
        let leak = |v: f64| -> &'static [f64] { Box::leak(Box::new([v])) };
        [
            (1, 10, &[100.0]),
            (1, 20, &[50.0]),
            (2, 10, leak(r2[0])),
            (2, 20, leak(r2[1])),
        ]
    };
    for band in ["within = 0.01", "between = [-0.01, 0.01]"] {
        let p = plan(&format!("same-{}", &band[..4]), &same(band));
        // 50% higher and 50% lower both fail; the same holds.
        assert_eq!(
            eval(&p, &with([150.0, 75.0])).checks[0].verdict,
            CheckVerdict::Fails
        );
        assert_eq!(
            eval(&p, &with([50.0, 25.0])).checks[0].verdict,
            CheckVerdict::Fails
        );
        assert_eq!(
            eval(&p, &with([100.0, 50.0])).checks[0].verdict,
            CheckVerdict::Holds
        );
    }
    // The same with ten noisy repetitions: the interval must lie inside the band.
    let p = plan(
        "same-noisy",
        &same("within = 0.01").replace(DETERMINISTIC, REPLICATED),
    );
    let noisy = |scale: f64| -> &'static [f64] {
        let v: Vec<f64> = (0..10)
            .map(|i| scale * (100.0 + [-0.1, 0.1][i % 2]))
            .collect();
        Box::leak(v.into_boxed_slice())
    };
    let base = noisy(1.0);
    for (scale, want) in [
        (1.5, CheckVerdict::Fails),
        (0.5, CheckVerdict::Fails),
        (1.0, CheckVerdict::Holds),
    ] {
        let points = [
            (1, 10, base),
            (1, 20, base),
            (2, 10, noisy(scale)),
            (2, 20, noisy(scale)),
        ];
        assert_eq!(eval(&p, &points).checks[0].verdict, want, "x {scale}");
    }
}

#[test]
fn a_deterministic_comparison_shows_no_ci() {
    let text = plan_text(
        DETERMINISTIC,
        CHECK_HIGHER.replace("higher\"\n", "lower\"\n").as_str(),
    );
    let dir = results_dir("deterministic", &text, &LOWER);
    let csv = std::fs::read_to_string(dir.join("checks.csv")).unwrap();
    // Two points, each one exact value: no interval anywhere.
    assert!(
        csv.contains(",holds,,tp,ratio of means,at every point,< 0%,2,\"-10.0% at 2 points, deterministic\",,,,,"),
        "{csv}"
    );
    let pts = std::fs::read_to_string(dir.join("checks_points.csv")).unwrap();
    for line in pts.lines().skip(1) {
        assert!(line.contains(",,,deterministic,"), "{line}");
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("-10.0% (deterministic)") && !report.contains("-10.0% ["),
        "{report}"
    );
    // Not declared deterministic, but every repetition identical: deterministic too.
    let text = plan_text(REPLICATED, &CHECK_HIGHER.replace("higher\"\n", "lower\"\n"));
    let ten = |v: f64| -> &'static [f64] { Box::leak(vec![v; 10].into_boxed_slice()) };
    let points = [
        (1, 10, ten(100.0)),
        (1, 20, ten(50.0)),
        (2, 10, ten(99.0)),
        (2, 20, ten(49.5)),
        (10, 10, ten(90.0)),
        (10, 20, ten(45.0)),
    ];
    let e = eval(&plan("identical", &text), &points);
    let c = &e.checks[0];
    assert_eq!(c.verdict, CheckVerdict::Holds);
    assert!(c
        .judged
        .points
        .iter()
        .all(|p| p.estimate.unwrap().ci.is_none()));
    assert!(c.reason.contains("repetitions identical"), "{}", c.reason);
}

/// A Mathis-like check: three points whose pooled mean is within 25% of the model
/// while two of them lie at -27% and -25.5%.
#[test]
fn at_every_point_names_what_pooling_hides() {
    let text = |aggregate: &str| {
        plan_text(
            DETERMINISTIC,
            &format!(
                r#"
[[checks]]
name = "near_model"
check = "within 25% of the analytic value"
basis = "analytic"
metric = "tp"
of = {{ rtt = 10 }}
within = 0.25
statistic = "mean of ratios"
{aggregate}
"#
            ),
        )
    };
    // Expected 100 at rtt 10: -27%, -25.5%, 0%.
    let points = [
        (1, 10, &[73.0][..]),
        (2, 10, &[74.5][..]),
        (10, 10, &[100.0][..]),
    ];
    let e = eval(&plan("every", &text("")), &points);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Fails);
    assert_eq!(e.checks[0].reason, "fails at ratio = 1; ratio = 2");
    let pooled = text("aggregate = \"pooled\"\npooled_because = \"to show what pooling hides\"");
    let e = eval(&plan("pooled", &pooled), &points);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Holds);
    assert_eq!(e.checks[0].judged.points[0].label, "all points");
    assert!((e.checks[0].judged.points[0].estimate.unwrap().value - -0.175).abs() < 1e-12);
}

/// The seed's India page: -15% by the ratio of means, +4% by the mean of ratios.
#[test]
fn the_statistic_follows_the_source() {
    let claim = |stat: &str| {
        plan_text(
            REPLICATED,
            &format!(
                r#"
[[claims]]
name = "page"
source = "003"
where = "Table 3"
claim = "QUIC cuts the page load time by 15%"
metric = "tp"
of = {{ ratio = 10 }}
against = {{ ratio = 1 }}
expect = "lower"
statistic = "{stat}"
published = {{ change = -0.15 }}
"#
            ),
        )
    };
    // Pairs whose mean ratio is above 1 while the ratio of means is well below it.
    let of: &[f64] = &[
        10.0, 200.0, 10.0, 200.0, 10.0, 200.0, 10.0, 200.0, 10.0, 200.0,
    ];
    let base: &[f64] = &[5.0, 400.0, 5.0, 400.0, 5.0, 400.0, 5.0, 400.0, 5.0, 400.0];
    let points = [(1, 10, base), (1, 20, base), (10, 10, of), (10, 20, of)];
    let e = eval(&plan("ratio-of-means", &claim("ratio of means")), &points);
    // mean(of) / mean(base) - 1 = 105 / 202.5 - 1 = -48%: lower, far from -15%.
    assert_eq!(
        e.claims[0].status,
        ClaimStatus::DirectionOnly,
        "{:?}",
        e.claims[0]
    );
    let e = eval(&plan("mean-of-ratios", &claim("mean of ratios")), &points);
    // mean(2, 0.5) - 1 = +25%: the other way, but too noisy to say: inconclusive.
    assert_eq!(
        e.claims[0].status,
        ClaimStatus::Inconclusive,
        "{:?}",
        e.claims[0]
    );
}

#[test]
fn claim_statuses_tolerance_and_not_run() {
    let text = plan_text(
        DETERMINISTIC,
        r#"
[[claims]]
name = "close"
source = "002"
where = "Table 2"
claim = "1:10 costs about 9%"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "lower"
statistic = "ratio of means"
published = { change = -0.09 }

[[claims]]
name = "far"
source = "002"
where = "Table 2"
claim = "1:10 costs 30%"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "lower"
statistic = "ratio of means"
published = { change = -0.30 }
tolerance = 0.1
tolerance_from = "the seed's spread over its runs"

[[claims]]
name = "elsewhere"
source = "Mathis et al., CCR 1997"
where = "eq. 3"
claim = "a claim this plan cannot test"
not_run = "needs delayed ACKs, which the model lacks"
"#,
    );
    let e = eval(&plan("statuses", &text), &LOWER);
    let status: Vec<(&str, ClaimStatus)> = e
        .claims
        .iter()
        .map(|c| (c.spec.name.as_str(), c.status))
        .collect();
    assert_eq!(
        status,
        [
            ("close", ClaimStatus::Reproduced),
            ("far", ClaimStatus::DirectionOnly),
            ("elsewhere", ClaimStatus::NotRun)
        ]
    );
    // The project default: 0.25 x 9% = 2.25 points (at least 2).
    assert!((e.claims[0].tolerance.unwrap() - 0.0225).abs() < 1e-12);
    assert_eq!(
        e.claims[2].reason,
        "needs delayed ACKs, which the model lacks"
    );
}

#[test]
fn quick_skips_show_their_reason() {
    let text = plan_text(
        &format!("{DETERMINISTIC}\n[quick]\nskip = {{ r10_higher_check = \"its points are not in quick\" }}"),
        CHECK_HIGHER,
    );
    let mut p = plan("skip", &text);
    p.quick_run = true;
    let e = eval(&p, &LOWER);
    assert_eq!(e.checks[0].verdict, CheckVerdict::NotRun);
    assert_eq!(
        e.checks[0].reason,
        "left out of quick: its points are not in quick"
    );
    assert!(!e.checks[0].verdict.is_failure());
    // The deprecated list: no reason given.
    let text = plan_text(
        &format!("{DETERMINISTIC}\n[quick]\nskip_findings = [\"r10_higher_check\"]"),
        CHECK_HIGHER,
    );
    let mut p = plan("skip-old", &text);
    p.quick_run = true;
    assert_eq!(
        eval(&p, &LOWER).checks[0].reason,
        "left out of quick (no reason given)"
    );
    assert!(plan_warnings(&p, Path::new("x.toml"))[0].contains("skip_findings is deprecated"));
}

#[test]
fn a_trend_is_a_slope_along_its_axis() {
    let text = |expect: &str| {
        plan_text(
            DETERMINISTIC,
            &format!(
                r#"
[[checks]]
name = "gain_grows"
check = "1:10's loss grows with the RTT"
basis = "model prediction"
metric = "tp"
of = {{ ratio = 10 }}
against = {{ ratio = 1 }}
trend = {{ axis = "rtt", expect = "{expect}" }}
"#
            ),
        )
    };
    // -10% at rtt 10, -20% at rtt 20: the change decreases along rtt.
    let points = [
        (1, 10, &[100.0][..]),
        (1, 20, &[50.0][..]),
        (10, 10, &[90.0][..]),
        (10, 20, &[40.0][..]),
    ];
    let e = eval(&plan("trend-down", &text("decreasing")), &points);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Holds);
    let slope = e.checks[0].judged.points[0].estimate.unwrap();
    assert!((slope.value - -0.01).abs() < 1e-12 && slope.is_exact());
    let e = eval(&plan("trend-up", &text("increasing")), &points);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Fails);
}

#[test]
fn missing_samples_are_no_data_and_named() {
    let text = plan_text(DETERMINISTIC, CHECK_HIGHER);
    let points = [
        (1, 10, &[100.0][..]),
        (1, 20, &[f64::NAN][..]),
        (10, 10, &[90.0][..]),
        (10, 20, &[45.0][..]),
    ];
    let t = runs_text(&points).replace("NaN", "");
    let summary = parse(&summary_text(&points), "summary.csv").unwrap();
    let e = evaluate(
        &plan("missing", &text),
        &parse(&t, "runs.csv").unwrap(),
        &summary,
    )
    .unwrap();
    assert_eq!(e.checks[0].verdict, CheckVerdict::NoData);
    assert_eq!(
        e.checks[0].reason,
        "1 of 2 pairs lack a sample (point 3 rep 0)"
    );
}

#[test]
fn findings_are_read_as_checks_with_a_warning() {
    let text = plan_text(
        "",
        r#"
[[findings]]
name = "old"
claim = "1:10 lowers throughput"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
expect = "lower"
"#,
    );
    let p = plan("findings", &text);
    let w = plan_warnings(&p, Path::new("experiments/old.toml"));
    assert!(
        w[0].starts_with("experiments/old.toml: [[findings]] is deprecated"),
        "{w:?}"
    );
    // One repetition, not declared deterministic: a warning here, an error with checks.
    assert!(w[1].contains("1 repetitions in full"), "{w:?}");
    let e = eval(&p, &LOWER);
    assert_eq!(e.checks[0].verdict, CheckVerdict::Holds);
    assert_eq!(e.checks[0].spec.basis, "[[findings]] (deprecated)");
}

#[test]
fn bad_statements_name_the_key() {
    let cases: [(&str, &str, &str); 9] = [
        (
            DETERMINISTIC,
            &CLAIM_HIGHER.replace("statistic = \"ratio of means\"\n", ""),
            "claims[0] (r10_higher).statistic",
        ),
        (
            DETERMINISTIC,
            &CHECK_HIGHER.replace(
                "expect = \"higher\"",
                "within = 0.1\naggregate = \"pooled\"",
            ),
            "checks[0] (r10_higher_check).pooled_because",
        ),
        (
            DETERMINISTIC,
            &CHECK_HIGHER.replace("expect = \"higher\"", "expect = \"higher\"\nwithin = 0.1"),
            "checks[0] (r10_higher_check).expect",
        ),
        (
            DETERMINISTIC,
            &format!("{CLAIM_HIGHER}published = {{ change = 0.1 }}\ntolerance = 0.05\n"),
            "claims[0] (r10_higher).tolerance_from",
        ),
        (
            DETERMINISTIC,
            &format!("{CLAIM_HIGHER}tolerance = 0.05\n"),
            "claims[0] (r10_higher).tolerance",
        ),
        (
            DETERMINISTIC,
            &CHECK_HIGHER.replace(
                "expect = \"higher\"",
                "trend = { axis = \"ratio\", expect = \"increasing\" }",
            ),
            "checks[0] (r10_higher_check).trend",
        ),
        (
            DETERMINISTIC,
            &format!("{CHECK_HIGHER}\n[quick]\nskip = {{ nothing = \"x\" }}"),
            "quick.skip",
        ),
        (
            "repetitions = 3",
            CHECK_HIGHER,
            "plan.toml:6: repetitions: 3 repetitions in full",
        ),
        (
            "deterministic = true\nrepetitions = 2",
            CHECK_HIGHER,
            "deterministic: a deterministic plan runs one repetition",
        ),
    ];
    for (i, (head, body, want)) in cases.iter().enumerate() {
        let e = error(&format!("bad-{i}"), &plan_text(head, body));
        assert!(e.contains(want), "case {i}: {e}");
    }
    let e = error(
        "no-basis",
        &plan_text(
            DETERMINISTIC,
            &CHECK_HIGHER.replace("basis = \"model prediction\"\n", ""),
        ),
    );
    assert!(e.contains("basis"), "{e}");
}
