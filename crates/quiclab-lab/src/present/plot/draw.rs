//! Draws a prepared figure on any plotters backend (PNG bitmap or SVG string).
//!
//! Colour and style rules (the same for every chart kind):
//! - colours come from the Tableau-10 palette ([`PALETTE`]); measured series `i`, CDF
//!   sample set `i` and bar group `i` use `PALETTE[i % 10]`;
//! - analytic curves take the colour of the series they model (same name, or the series
//!   name as a prefix: "NewReno" / "NewReno (model)"), else of the series with the same
//!   index; curves are thinner (1 px) and dashed, series lines are 2 px and solid with
//!   filled circle markers, so a curve and its series pair visibly but never look alike;
//! - error bars: 1 px, series colour, with caps; on bars they are near-black so they show
//!   against the fill;
//! - white background, light grey mesh, title on top, legend in whichever plot corner
//!   covers the least data (upper right preferred on ties).

use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::{BoldPoints, DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::prep::{AxisSpec, Layer, LayerKind, Prepared};
use super::{Figure, FAMILY, HEIGHT, WIDTH};

/// Tableau 10, the matplotlib default cycle: distinguishable, colour-blind tolerant.
pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const TITLE_SIZE: u32 = 26;
const DESC_SIZE: u32 = 19;
const TICK_SIZE: u32 = 15;
const LEGEND_SIZE: u32 = 16;
const MARKER_RADIUS: u32 = 4;
const CAP_WIDTH: u32 = 8;
const LEGEND_MARGIN: i32 = 8;
const LEGEND_SYMBOL: i32 = 34;

/// One axis coordinate: a single concrete type for linear, log and category axes, so the
/// drawing code is written once instead of once per scale combination.
enum Axis {
    Lin(RangedCoordf64),
    Log(LogCoord<f64>),
    /// Bar-chart categories at x = 0..n.
    Cat(RangedCoordf64, usize),
}

impl Axis {
    fn new(spec: &AxisSpec) -> Self {
        match (&spec.categories, spec.log) {
            (Some(c), _) => Axis::Cat((spec.lo..spec.hi).into(), c.len()),
            (None, true) => Axis::Log((spec.lo..spec.hi).log_scale().into()),
            (None, false) => Axis::Lin((spec.lo..spec.hi).into()),
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        match self {
            Axis::Lin(c) | Axis::Cat(c, _) => c.map(value, limit),
            Axis::Log(c) => c.map(value, limit),
        }
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match self {
            Axis::Lin(c) => c.key_points(hint),
            Axis::Log(c) => log_ticks(c.range(), hint.max_num_points()),
            Axis::Cat(_, n) => (0..*n).map(|i| i as f64).collect(),
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        match self {
            Axis::Lin(c) | Axis::Cat(c, _) => c.range(),
            Axis::Log(c) => c.range(),
        }
    }
}

/// Ticks of a log axis: m x 10^k inside the range, with the densest set of mantissas
/// (1..9, then 1-2-5, 1-3, 1) that gives at most `max` ticks, so a range of one or two
/// decades (0.25 to 5) is labelled too (plotters labels only powers of ten there).
fn log_ticks(range: std::ops::Range<f64>, max: usize) -> Vec<f64> {
    let (lo, hi) = (range.start.min(range.end), range.start.max(range.end));
    if !(lo > 0.0 && hi.is_finite()) {
        return Vec::new();
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |mantissas: &[f64]| -> Vec<f64> {
        (k0..=k1)
            // Divide for negative powers: 3 / 10 is 0.3 exactly as printed, 3 * 0.1 is not.
            .flat_map(|k| {
                mantissas.iter().map(move |m| {
                    if k < 0 {
                        m / 10f64.powi(-k)
                    } else {
                        m * 10f64.powi(k)
                    }
                })
            })
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect()
    };
    let dense: [&[f64]; 4] = [
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 3.0],
        &[1.0],
    ];
    // Half the hint: log ticks bunch up at the top of each decade.
    let limit = (max / 2).max(2);
    for m in dense {
        let v = within(m);
        if v.len() <= limit {
            return v;
        }
    }
    // Many decades: every n-th power of ten.
    let decades = within(&[1.0]);
    let step = decades.len().div_ceil(limit);
    decades.into_iter().step_by(step.max(1)).collect()
}

/// Tick label text: short, no float noise (0.30000000000000004 → "0.3"), scientific
/// notation only for very large or small magnitudes.
pub(super) fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" {
            "0".into()
        } else {
            s.into()
        }
    } else {
        let s = format!("{v:.3e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        format!("{m}e{e}")
    }
}

fn category_label(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 {
        names.get(i as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// Renders the SVG into a string.
pub(super) fn to_svg(fig: &Figure, p: &Prepared) -> Result<String, String> {
    super::register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, fig, p)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Renders the PNG file.
pub(super) fn to_png(fig: &Figure, p: &Prepared, path: &std::path::Path) -> Result<(), String> {
    super::register_font();
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    draw(&root, fig, p)?;
    root.present().map_err(|e| e.to_string())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
    p: &Prepared,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(root)
        .caption(&fig.title, (FAMILY, TITLE_SIZE))
        .margin(18)
        .x_label_area_size(60)
        .y_label_area_size(y_label_area(p))
        .build_cartesian_2d(Axis::new(&p.x), Axis::new(&p.y))
        .map_err(e)?;

    let xfmt = |v: &f64| match &p.x.categories {
        Some(names) => category_label(names, *v),
        None => tick(*v),
    };
    let yfmt = |v: &f64| tick(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .axis_desc_style((FAMILY, DESC_SIZE))
        .label_style((FAMILY, TICK_SIZE))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(240, 240, 240))
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_labels(12)
        .y_labels(10)
        .y_max_light_lines(2)
        .x_max_light_lines(if p.x.log { 10 } else { 2 });
    if p.x.categories.is_some() {
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(e)?;

    let mut ink = vec![];
    for layer in &p.layers {
        draw_layer(&mut chart, layer, p, &mut ink).map_err(e)?;
    }
    if !p.layers.is_empty() {
        let pos = legend_corner(&chart, p, &ink);
        chart
            .configure_series_labels()
            .position(pos)
            .margin(LEGEND_MARGIN)
            .legend_area_size(LEGEND_SYMBOL)
            .label_font((FAMILY, LEGEND_SIZE))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(190, 190, 190))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// Room for the y tick labels (which can be long, e.g. "1250000") and the axis title:
/// measured on the labels the mesh will actually draw.
fn y_label_area(p: &Prepared) -> u32 {
    let font = (FAMILY, TICK_SIZE).into_font();
    let widest = Axis::new(&p.y)
        .key_points(BoldPoints(10))
        .into_iter()
        .map(|v| {
            let t = tick(v);
            font.box_size(&t).map_or(t.len() as u32 * 9, |(w, _)| w)
        })
        .max()
        .unwrap_or(30);
    widest.min(200) + DESC_SIZE + 30
}

/// Draws one layer and records its pixels (`ink`) for legend placement.
fn draw_layer<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    layer: &Layer,
    p: &Prepared,
    ink: &mut Vec<(i32, i32)>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = colour(layer.colour);
    let clamp_lo = |lo: f64| if p.y.log { lo.max(p.y.lo) } else { lo };
    match &layer.kind {
        LayerKind::Measured { runs, points, errs } => {
            error_bars(chart, errs, c, clamp_lo)?;
            for &(x, lo, hi) in errs {
                trace(chart, &[(x, clamp_lo(lo)), (x, hi)], ink);
            }
            for run in runs {
                chart.draw_series(LineSeries::new(run.iter().copied(), c.stroke_width(2)))?;
                trace(chart, run, ink);
            }
            trace(chart, points, ink);
            let anno = chart.draw_series(
                points
                    .iter()
                    .map(|&pt| Circle::new(pt, MARKER_RADIUS, c.filled())),
            )?;
            let lines = !runs.is_empty();
            anno.label(layer.name.as_str()).legend(move |(x, y)| {
                let half = LEGEND_SYMBOL / 2 - 4;
                let half_line = if lines { half } else { 0 };
                EmptyElement::at((x + half, y))
                    + PathElement::new(vec![(-half_line, 0), (half_line, 0)], c.stroke_width(2))
                    + Circle::new((0, 0), MARKER_RADIUS, c.filled())
            });
        }
        LayerKind::Curve { runs } => {
            let style = c.stroke_width(1);
            for run in runs {
                trace(chart, run, ink);
                chart.draw_series(DashedLineSeries::new(run.iter().copied(), 7, 4, style))?;
            }
            // One legend entry however many runs the curve was split into.
            chart
                .draw_series(std::iter::empty::<EmptyElement<(f64, f64), DB>>())?
                .label(layer.name.as_str())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (7, 0)], style)
                        + PathElement::new(vec![(11, 0), (18, 0)], style)
                        + PathElement::new(vec![(22, 0), (26, 0)], style)
                });
        }
        LayerKind::Step { path } => {
            trace(chart, path, ink);
            chart
                .draw_series(LineSeries::new(path.iter().copied(), c.stroke_width(2)))?
                .label(layer.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + LEGEND_SYMBOL - 8, y)], c.stroke_width(2))
                });
        }
        LayerKind::Bars { rects, errs } => {
            chart
                .draw_series(rects.iter().map(|&(x0, x1, y0, y1)| {
                    Rectangle::new([(x0, y0), (x1, y1)], c.mix(0.85).filled())
                }))?
                .label(layer.name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + LEGEND_SYMBOL - 12, y + 6)], c.filled())
                });
            error_bars(chart, errs, RGBColor(40, 40, 40), clamp_lo)?;
            for &(x0, x1, y0, y1) in rects {
                // The outline and a coarse fill sample are enough to see overlap.
                let cols = 6;
                for k in 0..=cols {
                    let x = x0 + (x1 - x0) * k as f64 / cols as f64;
                    trace(chart, &[(x, y0), (x, y1)], ink);
                }
            }
            for &(x, lo, hi) in errs {
                trace(chart, &[(x, clamp_lo(lo)), (x, hi)], ink);
            }
        }
    }
    Ok(())
}

/// Vertical error bars `(x, lo, hi)` with caps. (plotters' `ErrorBar` also circles the
/// midpoint, which is not the measured value for asymmetric intervals.)
fn error_bars<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    errs: &[(f64, f64, f64)],
    c: RGBColor,
    clamp_lo: impl Fn(f64) -> f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = c.stroke_width(1);
    let half = CAP_WIDTH as i32 / 2;
    chart.draw_series(
        errs.iter()
            .map(|&(x, lo, hi)| PathElement::new(vec![(x, clamp_lo(lo)), (x, hi)], style)),
    )?;
    let ends = errs
        .iter()
        .flat_map(|&(x, lo, hi)| [(x, clamp_lo(lo)), (x, hi)]);
    chart.draw_series(
        ends.map(|at| EmptyElement::at(at) + PathElement::new(vec![(-half, 0), (half, 0)], style)),
    )?;
    Ok(())
}

/// Records the pixels along a polyline (every few pixels; bounded per segment).
fn trace<DB: DrawingBackend>(
    chart: &Chart<'_, DB>,
    path: &[(f64, f64)],
    ink: &mut Vec<(i32, i32)>,
) {
    let px: Vec<(i32, i32)> = path.iter().map(|pt| chart.backend_coord(pt)).collect();
    if let [only] = px[..] {
        ink.push(only);
    }
    for w in px.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let len = (x1 - x0).abs().max((y1 - y0).abs());
        let steps = (len / 4).clamp(1, 500);
        for k in 0..=steps {
            ink.push((x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps));
        }
    }
}

/// Picks the plot corner where the legend box covers the fewest ink pixels.
fn legend_corner<DB: DrawingBackend>(
    chart: &Chart<'_, DB>,
    p: &Prepared,
    ink: &[(i32, i32)],
) -> SeriesLabelPosition {
    let (w, h) = legend_size(p);
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (l, r, t, b) = (xr.start + 5, xr.end - 5 - w, yr.start + 5, yr.end - 5 - h);
    let corners = [
        (SeriesLabelPosition::UpperRight, r, t),
        (SeriesLabelPosition::UpperLeft, l, t),
        (SeriesLabelPosition::LowerRight, r, b),
        (SeriesLabelPosition::LowerLeft, l, b),
    ];
    let cover = |x: i32, y: i32| {
        // A few pixels of slack: ink just outside the box still looks cramped.
        ink.iter()
            .filter(|&&(px, py)| px >= x - 4 && px <= x + w + 4 && py >= y - 4 && py <= y + h + 4)
            .count()
    };
    corners
        .into_iter()
        .map(|(pos, x, y)| (cover(x, y), pos))
        .min_by_key(|(n, _)| *n)
        .map_or(SeriesLabelPosition::UpperRight, |(_, pos)| pos)
}

/// The legend box size in pixels, as plotters will lay it out.
fn legend_size(p: &Prepared) -> (i32, i32) {
    let font = (FAMILY, LEGEND_SIZE).into_font();
    let widest = p
        .layers
        .iter()
        .map(|l| {
            font.box_size(&l.name)
                .map_or(l.name.len() as u32 * 9, |(w, _)| w)
        })
        .max()
        .unwrap_or(0);
    // plotters' multi-line text advances 1.25 font sizes per line.
    let h = (p.layers.len() as f64 * LEGEND_SIZE as f64 * 1.25).ceil() as i32;
    (
        widest as i32 + LEGEND_SYMBOL + 2 * LEGEND_MARGIN,
        h + 2 * LEGEND_MARGIN,
    )
}

#[cfg(test)]
mod tests {
    use super::log_ticks;

    #[test]
    fn log_ticks_label_short_ranges_and_thin_long_ones() {
        assert_eq!(log_ticks(0.25..5.0, 12), [0.5, 1.0, 2.0, 5.0]);
        assert_eq!(log_ticks(2.0..8.0, 14), [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        assert_eq!(log_ticks(0.3..0.8, 12), [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
        assert_eq!(log_ticks(1.0..1e3, 12), [1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(
            log_ticks(1.0..1e3, 16),
            [1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0]
        );
        let wide = log_ticks(1e-6..1e6, 10);
        assert!(wide.len() <= 5 && wide.contains(&1e-6), "{wide:?}");
        assert!(log_ticks(0.0..1.0, 10).is_empty());
    }
}
