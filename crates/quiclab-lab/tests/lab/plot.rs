//! Figure rendering: one figure of each kind, degenerate data, determinism.
//!
//! Set `QUICLAB_PLOT_OUT=<dir>` to keep the rendered files for a look. `tests/golden/`
//! holds the three `renders_each_kind` PNGs as inspected by eye (reference pictures, not
//! compared byte-for-byte: rasterisation may change with plotters versions).

use std::path::PathBuf;

use quiclab_lab::present::plot::{
    render, render_svg, Chart, Curve, Figure, Point, Scale, Series, Style,
};

/// A fresh output directory per test (no tempfile dependency needed).
fn out_dir(test: &str) -> PathBuf {
    let base = std::env::var_os("QUICLAB_PLOT_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("quiclab-plot-{}", std::process::id()))
        });
    let dir = base.join(test);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pt(x: f64, y: f64, half: f64) -> Point {
    Point {
        x,
        y,
        err: Some((y - half, y + half)),
    }
}

/// Throughput vs loss: two measured series with CIs and the matching model curves.
fn xy_figure() -> Figure {
    let losses = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05];
    let mathis = |p: f64, c: f64| c * 1460.0 * 8.0 / 0.04 / p.sqrt() / 1e6;
    let series = |name: &str, k: f64, style| Series {
        name: name.into(),
        points: losses
            .iter()
            .map(|&p| {
                let y = (mathis(p, 1.22) * k).min(100.0);
                pt(p * 100.0, y, y * 0.08)
            })
            .collect(),
        style,
    };
    let curve = |name: &str, c: f64| Curve {
        name: name.into(),
        points: (0..=60)
            .map(|i| {
                let p = 0.0004 * 1.1f64.powi(i);
                (p * 100.0, mathis(p, c).min(100.0))
            })
            .collect(),
    };
    Figure {
        title: "Throughput vs loss, 40 ms RTT, 100 Mbit/s".into(),
        x_label: "packet loss (%)".into(),
        y_label: "goodput (Mbit/s)".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        chart: Chart::XY {
            series: vec![
                series("NewReno", 0.9, Style::Lines),
                series("Cubic", 1.2, Style::Scatter),
            ],
            curves: vec![
                curve("NewReno (Mathis model)", 1.22 * 0.9),
                curve("Cubic (model)", 1.22 * 1.2),
            ],
        },
    }
}

fn cdf_figure() -> Figure {
    // Deterministic pseudo-random samples (xorshift), no rand dependency.
    let mut s = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut a: Vec<f64> = (0..400).map(|_| 40.0 + 30.0 * next() * next()).collect();
    a.push(f64::NAN);
    let b: Vec<f64> = (0..400).map(|_| 40.0 + 80.0 * next().powi(3)).collect();
    Figure {
        title: "RTT distribution under load".into(),
        x_label: "RTT (ms)".into(),
        y_label: "fraction of samples".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        chart: Chart::Cdf {
            samples: vec![("FIFO".into(), b), ("CoDel".into(), a)],
        },
    }
}

fn bars_figure() -> Figure {
    let row = |v: [f64; 3]| v.iter().map(|&y| pt(0.0, y, y * 0.05 + 0.3)).collect();
    Figure {
        title: "Flow completion time by flow size".into(),
        x_label: "flow size".into(),
        y_label: "completion time (ms)".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        chart: Chart::Bars {
            categories: vec!["10 kB".into(), "100 kB".into(), "1 MB".into()],
            groups: vec!["NewReno".into(), "Cubic".into(), "BBR-ish".into()],
            values: vec![
                row([45.0, 130.0, 420.0]),
                row([44.0, 118.0, 350.0]),
                row([43.0, 110.0, 310.0]),
            ],
        },
    }
}

fn check(fig: &Figure, dir: &std::path::Path, stem: &str, names: &[&str]) {
    let stem = dir.join(stem);
    render(fig, &stem).unwrap();
    let png = std::fs::metadata(stem.with_extension("png")).unwrap().len();
    assert!(png > 5_000, "PNG only {png} bytes");
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(100)]);
    assert!(svg.contains(&fig.title), "title missing");
    assert!(
        svg.contains(&fig.x_label) && svg.contains(&fig.y_label),
        "axis label missing"
    );
    for n in names {
        assert!(svg.contains(n), "legend entry {n} missing");
    }
}

#[test]
fn renders_each_kind() {
    let dir = out_dir("kinds");
    check(
        &xy_figure(),
        &dir,
        "xy",
        &[
            "NewReno",
            "Cubic",
            "NewReno (Mathis model)",
            "Cubic (model)",
        ],
    );
    check(&cdf_figure(), &dir, "cdf", &["FIFO", "CoDel"]);
    check(
        &bars_figure(),
        &dir,
        "bars",
        &["NewReno", "Cubic", "BBR-ish", "10 kB", "1 MB"],
    );
}

#[test]
fn svg_is_deterministic() {
    for fig in [xy_figure(), cdf_figure(), bars_figure()] {
        assert_eq!(render_svg(&fig).unwrap(), render_svg(&fig).unwrap());
    }
    let dir = out_dir("determinism");
    render(&xy_figure(), &dir.join("a")).unwrap();
    render(&xy_figure(), &dir.join("b")).unwrap();
    assert_eq!(
        std::fs::read(dir.join("a.svg")).unwrap(),
        std::fs::read(dir.join("b.svg")).unwrap()
    );
}

fn xy(series: Vec<Series>, curves: Vec<Curve>, x_scale: Scale, y_scale: Scale) -> Figure {
    Figure {
        title: "degenerate".into(),
        x_label: "x (s)".into(),
        y_label: "y (B)".into(),
        x_scale,
        y_scale,
        chart: Chart::XY { series, curves },
    }
}

fn series(points: Vec<Point>) -> Series {
    Series {
        name: "s".into(),
        points,
        style: Style::Lines,
    }
}

fn p(x: f64, y: f64) -> Point {
    Point { x, y, err: None }
}

#[test]
fn nothing_to_draw_is_an_error_not_a_panic() {
    let dir = out_dir("empty");
    let lin = Scale::Linear;
    let empties = [
        xy(vec![], vec![], lin, lin),
        xy(vec![series(vec![])], vec![], lin, lin),
        xy(
            vec![series(vec![p(f64::NAN, 1.0), p(1.0, f64::INFINITY)])],
            vec![],
            lin,
            lin,
        ),
        // Nothing positive on a log axis.
        xy(
            vec![series(vec![p(0.0, 1.0), p(-1.0, 2.0)])],
            vec![],
            Scale::Log,
            lin,
        ),
        Figure {
            chart: Chart::Cdf {
                samples: vec![("a".into(), vec![]), ("b".into(), vec![f64::NAN])],
            },
            ..cdf_figure()
        },
        Figure {
            chart: Chart::Bars {
                categories: vec!["a".into()],
                groups: vec![],
                values: vec![],
            },
            ..bars_figure()
        },
        Figure {
            chart: Chart::Bars {
                categories: vec![],
                groups: vec!["g".into()],
                values: vec![vec![p(0.0, f64::NAN)]],
            },
            ..bars_figure()
        },
    ];
    for (i, fig) in empties.iter().enumerate() {
        let err = render(fig, &dir.join(format!("e{i}"))).unwrap_err();
        assert!(err.why.contains("nothing to draw"), "{i}: {err}");
    }
}

#[test]
fn degenerate_but_drawable_figures_render() {
    let dir = out_dir("degenerate");
    let (lin, log) = (Scale::Linear, Scale::Log);
    let figs = [
        // One point, one zero point, all-equal values, negative values.
        xy(vec![series(vec![p(3.0, 7.0)])], vec![], lin, lin),
        xy(vec![series(vec![p(0.0, 0.0)])], vec![], lin, lin),
        xy(
            vec![series(vec![p(1.0, 5.0), p(2.0, 5.0), p(3.0, 5.0)])],
            vec![],
            lin,
            log,
        ),
        xy(
            vec![series(vec![p(-1.0, -5.0), p(2.0, 3.0)])],
            vec![],
            lin,
            lin,
        ),
        // A NaN in the middle of a line; errors reversed and running below 0 on log y.
        xy(
            vec![series(vec![
                p(1.0, 1.0),
                p(2.0, f64::NAN),
                Point {
                    x: 3.0,
                    y: 2.0,
                    err: Some((4.0, -1.0)),
                },
            ])],
            vec![Curve {
                name: "only curve points are bad".into(),
                points: vec![(f64::NAN, 1.0)],
            }],
            lin,
            log,
        ),
        // Curves alone; huge and tiny magnitudes.
        xy(
            vec![],
            vec![Curve {
                name: "c".into(),
                points: vec![(1e-9, 1e12), (2e-9, 3e12)],
            }],
            lin,
            lin,
        ),
        Figure {
            chart: Chart::Cdf {
                samples: vec![("one".into(), vec![5.0]), ("empty".into(), vec![])],
            },
            ..cdf_figure()
        },
        Figure {
            chart: Chart::Bars {
                categories: vec!["only".into()],
                groups: vec![],
                values: vec![vec![p(0.0, -2.0)], vec![]],
            },
            ..bars_figure()
        },
    ];
    for (i, fig) in figs.iter().enumerate() {
        let stem = dir.join(format!("d{i}"));
        render(fig, &stem).unwrap_or_else(|e| panic!("{i}: {e}"));
        assert!(std::fs::metadata(stem.with_extension("png")).unwrap().len() > 1000);
    }
    // Overflowing ranges are reported, not drawn.
    let huge = xy(
        vec![series(vec![p(0.0, -f64::MAX), p(1.0, f64::MAX)])],
        vec![],
        lin,
        lin,
    );
    assert!(render(&huge, &dir.join("huge")).is_err());
}

#[test]
fn io_errors_are_reported() {
    let err = render(&xy_figure(), std::path::Path::new("/nonexistent-dir/x")).unwrap_err();
    assert!(err.path.contains("nonexistent-dir"), "{err}");
}

/// Any f64 at all, weighted towards the awkward ones.
fn any_f64() -> impl proptest::strategy::Strategy<Value = f64> {
    use proptest::prelude::*;
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        -1e6..1e6f64,
        any::<f64>(),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever the data, rendering returns (Ok or a PlotError) instead of panicking.
    #[test]
    fn arbitrary_data_never_panics(
        pts in proptest::collection::vec((any_f64(), any_f64(), any_f64(), any_f64()), 0..6),
        logx: bool,
        logy: bool,
        kind in 0..3u8,
    ) {
        let scale = |log| if log { Scale::Log } else { Scale::Linear };
        let points: Vec<Point> = pts
            .iter()
            .map(|&(x, y, lo, hi)| Point { x, y, err: Some((lo, hi)) })
            .collect();
        let chart = match kind {
            0 => Chart::XY {
                series: vec![series(points.clone())],
                curves: vec![Curve { name: "c".into(), points: pts.iter().map(|p| (p.0, p.2)).collect() }],
            },
            1 => Chart::Cdf { samples: vec![("a".into(), pts.iter().map(|p| p.0).collect())] },
            _ => Chart::Bars { categories: vec!["a".into()], groups: vec!["g".into()], values: vec![points] },
        };
        let fig = Figure { chart, ..xy(vec![], vec![], scale(logx), scale(logy)) };
        let _ = render_svg(&fig);
    }
}

/// Regression: a log axis spanning ~300 decades made plotters' tick loop run (almost)
/// forever; such values are now skipped on log axes.
#[test]
fn huge_log_span_terminates() {
    let fig = Figure {
        chart: Chart::Bars {
            categories: vec!["a".into()],
            groups: vec!["g".into()],
            values: vec![vec![p(0.0, 9.457790530389423e-281), p(0.0, 126786.6)]],
        },
        ..xy(vec![], vec![], Scale::Linear, Scale::Log)
    };
    // The regression hangs rather than fails: render on a thread and wait far longer
    // than a render takes (milliseconds), so a hang fails this test instead of stalling
    // the suite.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(render_svg(&fig)));
    let limit = std::time::Duration::from_secs(60);
    let svg = rx
        .recv_timeout(limit)
        .unwrap_or_else(|_| {
            panic!("render_svg still running after {limit:?}: the log-axis tick loop hangs again")
        })
        .unwrap();
    assert!(svg.contains("<svg"), "{svg}");
}
